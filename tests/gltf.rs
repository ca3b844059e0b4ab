//! glTF characters: the real files in `tests/data/gltf/` (see its LICENSES.md), rigs found
//! by name and by shape in every convention, clips sampled and baked, bad files refused.

#![cfg(feature = "gltf")]

use crowd_ik::cpu::clip_sample::sample_clip;
use crowd_ik::crowd::{find_legs, split_name, BipedSettings, JointPose, LegKind, Side};
use crowd_ik::glam::{Quat, Vec3};
use crowd_ik::gltf::{GltfScene, Property, RootMotion};
use crowd_ik::IkError;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gltf");

fn load(name: &str) -> GltfScene {
    GltfScene::load(format!("{DATA}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn names(scene: &GltfScene, joints: &[usize]) -> Vec<String> {
    joints.iter().map(|&j| scene.skins[0].names[j].clone()).collect()
}

#[test]
fn cesium_man_walks_on_a_rig_found_by_shape() {
    let scene = load("CesiumMan.glb");
    let sk = &scene.skins[0];
    assert_eq!(sk.len(), 19);
    assert_eq!(scene.clips.len(), 1);
    assert!((scene.clips[0].duration - 2.0).abs() < 1e-4);
    assert_eq!(scene.meshes.len(), 1);
    let mesh = &scene.meshes[0];
    assert_eq!((mesh.positions.len(), mesh.indices.len()), (3273, 14016));
    for w in &mesh.weights {
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    // The file is Z-up under a turned root node: folded in, the model stands up along +Y,
    // feet at the bottom, 1.2 m tall.
    let rest = sk.rest_pose().unwrap();
    let (lo, hi) =
        rest.iter().fold((f32::MAX, f32::MIN), |(lo, hi), p| (lo.min(p.position().y), hi.max(p.position().y)));
    assert!(lo > 0.0 && lo < 0.05 && (1.1..1.3).contains(&hi), "{lo}..{hi}");
    // Its joints are named leg_joint_L_1..5: no convention, so the legs come from shape.
    let found = sk.find_legs(Vec3::Y).unwrap();
    assert!(found.by_shape);
    assert_eq!(names(&scene, &found.legs[0]), ["leg_joint_L_1", "leg_joint_L_2", "leg_joint_L_3", "leg_joint_L_5"]);
    assert_eq!(names(&scene, &found.legs[1]), ["leg_joint_R_1", "leg_joint_R_2", "leg_joint_R_3", "leg_joint_R_5"]);
    assert_eq!(sk.names[found.pelvis], "Skeleton_torso_joint_1");
    let rig = sk.foot_rig(BipedSettings::default(), 1.0).unwrap();
    for leg in &rig.legs {
        assert!((leg.foot_height - 0.0646).abs() < 1e-3, "{}", leg.foot_height);
    }
    // The walk plants each foot on the floor the rest pose stands on: each toe comes down
    // to within 2 cm of the rest pose's toe height and never 2 cm below it.
    let clip = &scene.clips[0];
    let rest_toe = rest[found.legs[0][3]].position().y;
    let mut lowest = [f32::MAX; 2];
    for k in 0..80 {
        let pose = clip.sample(sk, k as f32 * 0.025).unwrap();
        for (l, leg) in found.legs.iter().enumerate() {
            let y = pose[leg[3]].position().y;
            assert!(y > rest_toe - 0.02, "t = {}: toe {l} at {y}", k as f32 * 0.025);
            lowest[l] = lowest[l].min(y);
        }
    }
    for y in lowest {
        assert!((y - rest_toe).abs() < 0.02, "{lowest:?} vs rest {rest_toe}");
    }
}

#[test]
fn the_fox_legs_are_found_by_name_in_centimetres() {
    let scene = load("Fox.glb");
    let sk = &scene.skins[0];
    assert_eq!(sk.len(), 24);
    let clips: Vec<&str> = scene.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(clips, ["Survey", "Walk", "Run"]);
    assert!(scene.clips.iter().all(|c| c.duration > 0.1 && !c.channels.is_empty()));
    let found = sk.find_legs(Vec3::Y).unwrap();
    assert!(!found.by_shape);
    assert_eq!(sk.names[found.pelvis], "b_Hip_01");
    assert_eq!(
        names(&scene, &found.legs[0]),
        ["b_LeftLeg01_015", "b_LeftLeg02_016", "b_LeftFoot01_017", "b_LeftFoot02_018"]
    );
    assert_eq!(
        names(&scene, &found.legs[1]),
        ["b_RightLeg01_019", "b_RightLeg02_020", "b_RightFoot01_021", "b_RightFoot02_022"]
    );
    // The front legs are named as arms and end at the paw: two-bone legs with a point
    // foot, the wrist both ankle and toe.
    assert_eq!(found.legs.len(), 4);
    assert_eq!(
        names(&scene, &found.legs[2]),
        ["b_LeftUpperArm_09", "b_LeftForeArm_010", "b_LeftHand_011", "b_LeftHand_011"]
    );
    assert_eq!(
        names(&scene, &found.legs[3]),
        ["b_RightUpperArm_06", "b_RightForeArm_07", "b_RightHand_08", "b_RightHand_08"]
    );
    // Centimetres: the hip stands ~43 units high.
    let rest = sk.rest_pose().unwrap();
    assert!((40.0..46.0).contains(&rest[found.pelvis].position().y));
    // A biped's arms are not legs: Cesium Man's rig keeps two.
    assert_eq!(load("CesiumMan.glb").skins[0].find_legs(Vec3::Y).unwrap().legs.len(), 2);
}

#[test]
fn a_foot_hung_from_an_ik_helper_bone_is_refused_naming_it() {
    let scene = load("ik_helper_humanoid.gltf");
    assert_eq!(scene.skins[0].len(), 29);
    assert_eq!(
        scene.clips.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["Action", "Idle", "Jump", "Run", "Walk"]
    );
    let err = scene.skins[0].foot_rig(BipedSettings::default(), 1.0).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, IkError::InvalidRig(_)));
    for part in ["Foot.L", "Shin.L", "Heel.IK.L", "IK helper"] {
        assert!(msg.contains(part), "{msg}");
    }
}

/// A channel sampled at its own keyframe times gives the keyframe's value.
#[test]
fn clips_sample_their_keyframes_exactly() {
    for file in ["CesiumMan.glb", "Fox.glb", "ik_helper_humanoid.gltf"] {
        let scene = load(file);
        let sk = &scene.skins[0];
        for clip in &scene.clips {
            for ch in &clip.channels {
                let Some(j) = sk.nodes.iter().position(|&n| n == ch.node) else { continue };
                let w = if ch.property == Property::Rotation { 4 } else { 3 };
                for (k, &t) in ch.times.iter().enumerate().step_by(7) {
                    let local = clip.sample_local(sk, t)[j];
                    let want = &ch.values[k * w..k * w + w];
                    match ch.property {
                        Property::Translation => assert!(local.translation.abs_diff_eq(Vec3::from_slice(want), 1e-5)),
                        Property::Scale => assert!(local.scale.abs_diff_eq(Vec3::from_slice(want), 1e-5)),
                        Property::Rotation => {
                            let q = Quat::from_slice(want).normalize();
                            assert!(local.rotation.dot(q).abs() > 1.0 - 1e-6, "{file} {}: {k}", clip.name);
                        }
                    }
                }
            }
        }
    }
}

/// Baked at 60 frames per second, the crate's clip sampler plays a clip as the glTF
/// sampler does at the frames (the same poses up to f32 rounding).
#[test]
fn baked_clips_play_back_in_the_crates_sampler() {
    for (file, height) in [("CesiumMan.glb", 1.2), ("Fox.glb", 60.0), ("ik_helper_humanoid.gltf", 1.1)] {
        let scene = load(file);
        let sk = &scene.skins[0];
        for clip in &scene.clips {
            let baked = clip.bake(sk, 60.0, RootMotion::Keep).unwrap();
            assert_eq!(baked.local.len(), baked.frames * sk.len());
            let mut out = vec![JointPose::default(); sk.len()];
            for f in (0..baked.frames).step_by(5) {
                let t = f as f32 * baked.frame_time;
                sample_clip(&baked.local, &baked.parents, baked.frame_time, t + 1e-4 * baked.frame_time, &mut out);
                let want = clip.sample(sk, t).unwrap();
                for (j, (a, b)) in out.iter().zip(&want).enumerate() {
                    let d = a.position().distance(b.position());
                    assert!(d < 2e-5 * height, "{file} {} frame {f} joint {}: {d}", clip.name, sk.names[j]);
                    assert!(a.rotation().dot(b.rotation()).abs() > 1.0 - 1e-5);
                }
            }
        }
    }
}

#[test]
fn extracted_root_motion_plays_in_place() {
    let scene = load("Fox.glb");
    let sk = &scene.skins[0];
    let clip = scene.clip("Walk").unwrap();
    let keep = clip.bake(sk, 30.0, RootMotion::Keep).unwrap();
    let place = clip.bake(sk, 30.0, RootMotion::Extract).unwrap();
    assert_eq!(place.root_motion.len(), place.frames);
    let n = sk.len();
    for f in 0..place.frames {
        let (k, p) = (keep.local[f * n].position(), place.local[f * n].position());
        let first = place.local[0].position();
        assert!((p.x - first.x).abs() < 1e-4 && (p.z - first.z).abs() < 1e-4);
        assert!((p + place.root_motion[f]).abs_diff_eq(k, 1e-3), "{f}");
    }
}

/// A skeleton in each naming convention (the legs of `rest_skeleton`), at three unit
/// scales, found by name.
#[test]
fn rigs_are_found_by_name_in_every_convention() {
    let conventions: [(&str, [&str; 4], [&str; 4]); 6] = [
        (
            "Hips",
            ["mixamorig:LeftUpLeg", "mixamorig:LeftLeg", "mixamorig:LeftFoot", "mixamorig:LeftToeBase"],
            ["mixamorig:RightUpLeg", "mixamorig:RightLeg", "mixamorig:RightFoot", "mixamorig:RightToeBase"],
        ),
        ("pelvis", ["thigh_l", "calf_l", "foot_l", "ball_l"], ["thigh_r", "calf_r", "foot_r", "ball_r"]),
        (
            "Hips",
            ["LeftUpperLeg", "LeftLowerLeg", "LeftFoot", "LeftToes"],
            ["RightUpperLeg", "RightLowerLeg", "RightFoot", "RightToes"],
        ),
        (
            "J_Bip_C_Hips",
            ["J_Bip_L_UpperLeg", "J_Bip_L_LowerLeg", "J_Bip_L_Foot", "J_Bip_L_ToeBase"],
            ["J_Bip_R_UpperLeg", "J_Bip_R_LowerLeg", "J_Bip_R_Foot", "J_Bip_R_ToeBase"],
        ),
        (
            "DEF-spine",
            ["DEF-thigh.L", "DEF-shin.L", "DEF-foot.L", "DEF-toe.L"],
            ["DEF-thigh.R", "DEF-shin.R", "DEF-foot.R", "DEF-toe.R"],
        ),
        (
            "Hips",
            ["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"],
            ["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"],
        ),
    ];
    for (pelvis, left, right) in conventions {
        for scale in [0.01, 1.0, 100.0] {
            let (names, parents, rest) = rest_skeleton(pelvis, left, right, scale);
            let found = find_legs(&names, &parents, &rest, Vec3::Y).unwrap_or_else(|e| panic!("{pelvis}: {e}"));
            assert!(!found.by_shape, "{left:?}");
            assert_eq!(names[found.pelvis], pelvis);
            assert_eq!(found.legs[0].map(|j| names[j].as_str()), left);
            assert_eq!(found.legs[1].map(|j| names[j].as_str()), right);
            // And by shape, with the names taken away.
            let anonymous: Vec<String> = (0..names.len()).map(|j| format!("bone{j}")).collect();
            let shape = find_legs(&anonymous, &parents, &rest, Vec3::Y).unwrap();
            assert!(shape.by_shape);
            assert_eq!((shape.pelvis, &shape.legs), (found.pelvis, &found.legs), "{pelvis} at {scale}");
        }
    }
}

/// A Z-up skeleton (the up axis passed as +Z) is found the same way.
#[test]
fn z_up_skeletons_are_found_by_shape() {
    let (names, parents, rest) = rest_skeleton("Hips", ["a", "b", "c", "d"], ["e", "f", "g", "h"], 1.0);
    let turn = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2); // +Y up → +Z up
    let rest: Vec<JointPose> = rest.iter().map(|p| JointPose::new(turn * p.position(), turn * p.rotation())).collect();
    let found = find_legs(&names, &parents, &rest, Vec3::Z).unwrap();
    assert_eq!(found.legs[0].map(|j| names[j].as_str()), ["a", "b", "c", "d"]);
}

#[test]
fn rigs_missing_a_joint_or_out_of_order_are_refused_naming_it() {
    // No toe on the left.
    let (mut names, parents, rest) = rest_skeleton(
        "Hips",
        ["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"],
        ["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"],
        1.0,
    );
    let toe = names.iter().position(|n| n == "LeftToeBase").unwrap();
    names[toe] = "LeftSock".into();
    let msg = find_legs(&names, &parents, &rest, Vec3::Y).unwrap_err().to_string();
    assert!(msg.contains("left leg has no toe"), "{msg}");
    // The right foot hung from the hips.
    let (names, mut parents, rest) = rest_skeleton(
        "Hips",
        ["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"],
        ["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"],
        1.0,
    );
    let foot = names.iter().position(|n| n == "RightFoot").unwrap();
    parents[foot] = Some(0);
    let msg = find_legs(&names, &parents, &rest, Vec3::Y).unwrap_err().to_string();
    assert!(msg.contains("\"RightFoot\" is not below the knee \"RightLeg\""), "{msg}");
}

#[test]
fn joint_names_split_into_side_and_role() {
    assert_eq!(split_name("mixamorig:LeftUpLeg"), (Some(Side::Left), "upleg".into()));
    assert_eq!(split_name("ball_r"), (Some(Side::Right), "ball".into()));
    assert_eq!(split_name("DEF-toe.L"), (Some(Side::Left), "toe".into()));
}

/// A standing biped: pelvis at 1 m, a spine, and two legs (hip, knee, ankle, toe) with
/// the given names, every length × `scale`; joints listed pelvis, spine, left, right.
fn rest_skeleton(
    pelvis: &str,
    left: [&str; 4],
    right: [&str; 4],
    scale: f32,
) -> (Vec<String>, Vec<Option<usize>>, Vec<JointPose>) {
    let mut names = vec![pelvis.to_string(), "Spine".to_string()];
    let mut parents = vec![None, Some(0)];
    let mut pos = vec![Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.3, 0.0)];
    for (side, leg) in [(1.0, left), (-1.0, right)] {
        let x = 0.1 * side;
        let at = [Vec3::new(x, 0.95, 0.0), Vec3::new(x, 0.52, 0.02), Vec3::new(x, 0.08, 0.0), Vec3::new(x, 0.01, 0.12)];
        for (k, name) in leg.iter().enumerate() {
            parents.push(Some(if k == 0 { 0 } else { names.len() - 1 }));
            names.push((*name).to_string());
            pos.push(at[k]);
        }
    }
    let rest = pos.into_iter().map(|p| JointPose::new(p * scale, Quat::IDENTITY)).collect();
    (names, parents, rest)
}

/// The GLB container around `json` and `bin`.
fn glb(json: &serde_json::Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + 8 + b.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&b);
    out
}

/// A GLB file's JSON and binary chunk.
fn unglb(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let jl = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&bytes[20..20 + jl]).unwrap();
    let bl = u32::from_le_bytes(bytes[20 + jl..24 + jl].try_into().unwrap()) as usize;
    (json, bytes[28 + jl..28 + jl + bl].to_vec())
}

/// Unit scale and axis conventions: the Fox under a node that scales it by 0.01 (or 100)
/// and turns it Z-up is found the same, its rest pose scaled, still Y-up in model space.
#[test]
fn scale_and_axis_of_the_nodes_above_the_skin_are_folded_in() {
    let bytes = std::fs::read(format!("{DATA}/Fox.glb")).unwrap();
    let (json, bin) = unglb(&bytes);
    let base = GltfScene::from_slice(&bytes, None).unwrap();
    let base_rest = base.skins[0].rest_pose().unwrap();
    for scale in [0.01_f32, 100.0] {
        let mut j = json.clone();
        // Wrap the scene's root node: a Z-up exporter's turn undone by the file, and a unit
        // scale on top (what Blender and Mixamo exports carry on the armature node).
        let nodes = j["nodes"].as_array_mut().unwrap();
        let wrapper = nodes.len();
        let roots = j["scenes"][0]["nodes"].clone();
        j["nodes"].as_array_mut().unwrap().push(serde_json::json!({
            "name": "Armature", "children": roots, "scale": [scale, scale, scale],
            "rotation": [0.0, 0.0, 0.0, 1.0]
        }));
        j["scenes"][0]["nodes"] = serde_json::json!([wrapper]);
        let scene = GltfScene::from_slice(&glb(&j, &bin), None).unwrap();
        let rest = scene.skins[0].rest_pose().unwrap();
        for (a, b) in rest.iter().zip(&base_rest) {
            assert!(a.position().abs_diff_eq(b.position() * scale, 1e-4 * scale * 60.0));
        }
        let found = scene.skins[0].find_legs(Vec3::Y).unwrap();
        assert_eq!(scene.skins[0].names[found.legs[0][2]], "b_LeftFoot01_017");
    }
}

/// Broken files are errors that say what is wrong, never panics.
#[test]
fn broken_files_are_refused_with_a_reason() {
    let bytes = std::fs::read(format!("{DATA}/Fox.glb")).unwrap();
    // Truncated anywhere.
    for cut in (0..bytes.len()).step_by(997).chain([bytes.len() - 1]) {
        assert!(GltfScene::from_slice(&bytes[..cut], None).is_err(), "cut at {cut}");
    }
    assert!(GltfScene::from_slice(b"not a gltf at all", None).is_err());
    let (json, bin) = unglb(&bytes);
    let expect = |j: &serde_json::Value, bin: &[u8], words: &[&str]| {
        let err = GltfScene::from_slice(&glb(j, bin), None).map(|_| ()).unwrap_err().to_string();
        for w in words {
            assert!(err.contains(w), "{err}");
        }
    };
    // An accessor whose count runs past its buffer (absurd header counts).
    let mut j = json.clone();
    j["accessors"][0]["count"] = serde_json::json!(4_000_000_000u64);
    expect(&j, &bin, &["accessor 0"]);
    // A buffer shorter than it says.
    expect(&json, &bin[..bin.len() / 2], &["buffer 0"]);
    // A sparse accessor.
    let mut j = json.clone();
    let acc = j["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
    j["accessors"][acc]["sparse"] = serde_json::json!({"count": 1, "indices": {"bufferView": 0, "componentType": 5125}, "values": {"bufferView": 0}});
    expect(&j, &bin, &["sparse"]);
    // A joint listed twice.
    let mut j = json.clone();
    let first = j["skins"][0]["joints"][0].clone();
    j["skins"][0]["joints"][1] = first;
    expect(&j, &bin, &["listed twice"]);
    // A node that is its own ancestor.
    let mut j = json.clone();
    let top = j["skins"][0]["joints"][0].as_u64().unwrap();
    let last = j["skins"][0]["joints"].as_array().unwrap().last().unwrap().as_u64().unwrap() as usize;
    j["nodes"][last]["children"] = serde_json::json!([top]);
    assert!(GltfScene::from_slice(&glb(&j, &bin), None).is_err());
    // A data URI that is not base64, and a file buffer with no folder to read it from.
    let mut j = json.clone();
    j["buffers"][0]["uri"] = serde_json::json!("data:application/octet-stream;base64,@@@@");
    expect(&j, &[], &["base64"]);
    let mut j = json.clone();
    j["buffers"][0]["uri"] = serde_json::json!("../outside.bin");
    assert!(GltfScene::from_slice(&glb(&j, &[]), None).is_err());
    // Values glTF does not define for an animated property, an interpolation, an element
    // type (the `gltf` crate's readers panic on them; found by the loaders fuzz target).
    for (path, value, word) in [
        (&["animations", "0", "channels", "0", "target", "path"][..], "position", "animation"),
        (&["animations", "0", "samplers", "0", "interpolation"][..], "SMOOTH", "animation"),
        (&["accessors", "0", "type"][..], "VEC7", "accessor"),
    ] {
        let mut j = json.clone();
        let mut at = &mut j;
        for key in path {
            at = match key.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*key],
            };
        }
        *at = serde_json::json!(value);
        expect(&j, &bin, &[word]);
    }
    // Indices past the items the file has (the `gltf` crate panics on some of them; found
    // by the loaders fuzz target).
    let far = serde_json::json!(100_000);
    for path in [
        &["animations", "0", "channels", "0", "target", "node"][..],
        &["animations", "0", "channels", "0", "sampler"][..],
        &["skins", "0", "joints", "3"][..],
        &["accessors", "0", "bufferView"][..],
        &["bufferViews", "0", "buffer"][..],
        // The `gltf` crate's own validation indexes a primitive's POSITION accessor
        // unchecked (found by the loaders fuzz target after 650 000 runs).
        &["meshes", "0", "primitives", "0", "attributes", "POSITION"][..],
    ] {
        let mut j = json.clone();
        let mut at = &mut j;
        for key in path {
            at = match key.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*key],
            };
        }
        *at = far.clone();
        assert!(GltfScene::from_slice(&glb(&j, &bin), None).is_err(), "{path:?}");
    }
    // Keyframe times that run backwards.
    let j = json.clone();
    let input = j["animations"][0]["samplers"][0]["input"].as_u64().unwrap() as usize;
    let view = j["accessors"][input]["bufferView"].as_u64().unwrap() as usize;
    let offset = j["bufferViews"][view]["byteOffset"].as_u64().unwrap_or(0) as usize
        + j["accessors"][input]["byteOffset"].as_u64().unwrap_or(0) as usize;
    let mut bad = bin.clone();
    bad[offset..offset + 4].copy_from_slice(&1e9f32.to_le_bytes());
    expect(&j, &bad, &["keyframe times"]);
}

/// A channel that animates a node folded into the skeleton (here: the Fox's non-joint
/// root) cannot be played: an error naming it.
#[test]
fn channels_on_folded_nodes_are_refused() {
    let bytes = std::fs::read(format!("{DATA}/Fox.glb")).unwrap();
    let (mut json, bin) = unglb(&bytes);
    let top = json["skins"][0]["joints"][0].as_u64().unwrap();
    // The Fox's joints hang from a node named "root"; animate it.
    let root = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["children"].as_array().is_some_and(|c| c.iter().any(|x| x.as_u64() == Some(top))));
    let root = root.expect("a node above the skin");
    json["animations"][0]["channels"][0]["target"]["node"] = serde_json::json!(root);
    let scene = GltfScene::from_slice(&glb(&json, &bin), None).unwrap();
    let err = scene.clips[0].sample(&scene.skins[0], 0.0).unwrap_err().to_string();
    assert!(err.contains(&format!("node {root}")), "{err}");
    assert!(scene.clips[0].bake(&scene.skins[0], 30.0, RootMotion::Keep).is_err());
}

/// Real files with bytes flipped (in the JSON and in the binary data: NaN, huge and
/// negative numbers, broken indices): each loads or is refused, and what loads samples,
/// bakes and finds or refuses its rig, never panicking, never producing a non-finite pose
/// without an error.
#[test]
fn flipped_bytes_never_panic() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for file in ["CesiumMan.glb", "Fox.glb"] {
        let bytes = std::fs::read(format!("{DATA}/{file}")).unwrap();
        let mut loaded = 0;
        for _ in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() % b.len() as u64) as usize;
                let at = at - at % 4;
                let v: [u8; 4] = match next() % 4 {
                    0 => f32::NAN.to_le_bytes(),
                    1 => 3e38f32.to_le_bytes(),
                    2 => (next() as u32).to_le_bytes(),
                    _ => [b'9', b'9', b'9', b'9'],
                };
                let end = (at + 4).min(b.len());
                b[at..end].copy_from_slice(&v[..end - at]);
            }
            let Ok(scene) = GltfScene::from_slice(&b, None) else { continue };
            loaded += 1;
            for sk in &scene.skins {
                let _ = sk.foot_rig(BipedSettings::default(), 1.0);
                for clip in &scene.clips {
                    if let Ok(pose) = clip.sample(sk, 0.5 * clip.duration) {
                        assert!(pose.iter().all(|p| p.position().is_finite() && p.rotation().is_finite()), "{file}");
                    }
                    if clip.duration < 10.0 {
                        let _ = clip.bake(sk, 10.0, RootMotion::Extract);
                    }
                }
            }
        }
        assert!(loaded > 50, "{file}: only {loaded} of 300 mutants loaded; the test would say little");
    }
}

/// A quadruped whose joints have no known names: four legs (a shoulder or hip, two joints,
/// a hoof) under a spine, found by shape, left before right, front and hind.
#[test]
fn quadruped_legs_are_found_by_shape() {
    let mut names = vec!["root".to_string(), "chest".to_string()];
    let mut parents = vec![None, Some(0)];
    let mut pos = vec![Vec3::new(0.0, 0.8, -0.4), Vec3::new(0.0, 0.85, 0.4)];
    for (body, z) in [(1usize, 0.4f32), (0, -0.4)] {
        for x in [0.15f32, -0.15] {
            for (k, y) in [0.75f32, 0.45, 0.15, 0.0].iter().enumerate() {
                parents.push(Some(if k == 0 { body } else { names.len() - 1 }));
                names.push(format!("bone{}", names.len()));
                pos.push(Vec3::new(x, *y, z + 0.02 * k as f32));
            }
        }
    }
    let rest: Vec<JointPose> = pos.into_iter().map(|p| JointPose::new(p, Quat::IDENTITY)).collect();
    let found = find_legs(&names, &parents, &rest, Vec3::Y).unwrap();
    assert!(found.by_shape);
    assert_eq!(found.pelvis, 0);
    assert_eq!(found.legs.len(), 4);
    for leg in &found.legs {
        assert_eq!(rest[leg[3]].position().y, 0.0);
        assert_eq!(parents[leg[0]].map(|p| p <= 1), Some(true));
    }
    // Left (+x) legs first.
    assert!(rest[found.legs[0][0]].position().x > 0.0 && rest[found.legs[1][0]].position().x > 0.0);

    // The same skeleton as a glTF file (nodes and a skin, no buffers): its quadruped rig in
    // one call has the hind legs (hips furthest back along +Z) pseudo three-bone and the
    // front legs two-bone.
    let nodes: Vec<serde_json::Value> = (0..names.len())
        .map(|j| {
            let local = rest[j].position() - parents[j].map_or(Vec3::ZERO, |p| rest[p].position());
            let children: Vec<usize> = (0..names.len()).filter(|&c| parents[c] == Some(j)).collect();
            serde_json::json!({ "name": names[j], "translation": local.to_array(), "children": children })
        })
        .collect();
    let file = serde_json::json!({
        "asset": { "version": "2.0" },
        "nodes": nodes,
        "skins": [{ "joints": (0..names.len()).collect::<Vec<_>>() }],
        "scenes": [{ "nodes": [0] }],
        "scene": 0
    });
    let scene = GltfScene::from_slice(&serde_json::to_vec(&file).unwrap(), None).unwrap();
    let rig = scene.skins[0].quadruped_rig(BipedSettings::default(), 1.0).unwrap();
    assert_eq!(rig.legs.len(), 4);
    for leg in &rig.legs {
        let hind = rest[leg.joints[0]].position().z < 0.0;
        let want = if hind { LegKind::PseudoThreeBone { blend: 0.5 } } else { LegKind::TwoBone };
        assert_eq!(leg.kind, want, "leg {:?}", leg.joints);
    }
}

/// The Fox on its four legs, its rig built in one call (`GltfScene::quadruped_rig`): hind
/// legs (found by name) pseudo three-bone, front legs (named as arms, ending at the paw)
/// two-bone with a point foot whose height under the wrist comes from the paw's mesh. Its
/// Walk clip over hills (stateless foot IK, the file in centimetres at scale 0.01): every
/// planted hoof tip and paw bottom on the ground, and no knee, stifle or hock bent to the
/// other side than the animation bends it.
#[test]
fn the_fox_plants_its_four_feet_on_hills() {
    use crowd_ik::cpu::foot_ik::FootIkJob;
    use crowd_ik::crowd::{foot, CharacterInput, FootResult, Ground, Heightfield};
    use crowd_ik::glam::Vec2;
    let scene = load("Fox.glb");
    let sk = &scene.skins[0];
    let scale = 0.01;
    let found = sk.find_legs(Vec3::Y).unwrap();
    let rig = scene.quadruped_rig(0, BipedSettings::default(), scale).unwrap();
    assert_eq!(rig.legs.iter().map(|l| l.joints).collect::<Vec<_>>(), found.legs);
    let kinds: Vec<LegKind> = rig.legs.iter().map(|l| l.kind).collect();
    let hind = LegKind::PseudoThreeBone { blend: 0.5 };
    assert_eq!(kinds, [hind, hind, LegKind::TwoBone, LegKind::TwoBone]);
    // The paw's bottom under the wrist: the rest pose stands on its paws (the wrist 6.7 cm
    // up), so about the wrist's height.
    let rest = sk.rest_pose().unwrap();
    for leg in &rig.legs[2..] {
        let wrist = rest[leg.joints[2]].position().y * scale;
        assert!((leg.foot_height - wrist).abs() < 0.005 && wrist > 0.03, "{} vs {wrist}", leg.foot_height);
    }
    let clip = scene.clip("Walk").unwrap().bake(sk, 60.0, RootMotion::Extract).unwrap();
    let hills =
        Heightfield::from_fn(Vec2::splat(-10.0), 0.05, 401, 401, |x, z| 0.25 * (0.9 * x).sin() * (0.7 * z).cos())
            .unwrap();
    let ground = Ground::Heightfield(hills.clone());
    // Each foot's sole (model units): a hind leg's hoof tip, a front leg's paw bottom (the
    // foot height under the wrist, along the foot's up axis).
    let sole = |pose: &[JointPose], l: usize| -> Vec3 {
        let leg = &rig.legs[l];
        let p = pose[leg.joints[3]];
        p.position() - p.rotation() * leg.foot_up.normalize() * (leg.foot_height / scale)
    };
    // Each foot's floor in the clip: a low percentile of its soles' heights.
    let mut model = vec![JointPose::default(); sk.len()];
    let mut heights = vec![Vec::new(); 4];
    for f in 0..clip.frames {
        sample_clip(&clip.local, &clip.parents, clip.frame_time, f as f32 * clip.frame_time, &mut model);
        for (l, h) in heights.iter_mut().enumerate() {
            h.push(sole(&model, l).y);
        }
    }
    let floor: Vec<f32> = heights
        .iter_mut()
        .map(|h| {
            h.sort_by(f32::total_cmp);
            h[h.len() / 10]
        })
        .collect();
    let low = floor.iter().copied().fold(f32::INFINITY, f32::min);
    let mut rng = 0x9e37_79b9_u64;
    let mut next = move || {
        rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (rng >> 40) as f32 / (1u64 << 24) as f32
    };
    let spots: Vec<(Vec2, f32, f32)> = (0..32)
        .map(|_| (Vec2::new(next() * 16.0 - 8.0, next() * 16.0 - 8.0), next() * std::f32::consts::TAU, next()))
        .collect();
    let (mut planted, mut worst, mut flipped) = ([0; 2], [0.0_f32; 2], 0);
    for frame in 0..60 {
        let (mut chars, mut poses) = (Vec::new(), Vec::new());
        for &(at, heading, t0) in &spots {
            sample_clip(&clip.local, &clip.parents, clip.frame_time, t0 + frame as f32 / 60.0, &mut model);
            let w: [f32; 4] = std::array::from_fn(|l| f32::from(sole(&model, l).y - floor[l] <= 3.0));
            let y = hills.sample(at.x, at.y).unwrap().0;
            chars.push(
                CharacterInput::new(Vec3::new(at.x, y - low * scale, at.y), Quat::from_rotation_y(heading))
                    .with_scale(scale)
                    .with_foot_weights(w),
            );
            poses.extend_from_slice(&model);
        }
        let mut out = vec![JointPose::default(); poses.len()];
        let mut res = vec![FootResult::default(); chars.len()];
        FootIkJob::new(&rig, &ground, &chars, &poses, &mut out, &mut res).run().unwrap();
        let n = sk.len();
        for (c, (ch, r)) in chars.iter().zip(&res).enumerate() {
            for (l, leg) in found.legs.iter().enumerate() {
                if ch.foot_weights[l] < 1.0 || r.status[l] & foot::HIT == 0 {
                    continue;
                }
                let front = usize::from(l >= 2);
                planted[front] += 1;
                let tip = ch.to_world(sole(&out[c * n..(c + 1) * n], l));
                let (g, _) = hills.sample(tip.x, tip.z).unwrap();
                worst[front] = worst[front].max((tip.y - g).abs());
                // The side each bending joint bends to, against the animation's.
                let bend = |p: &[JointPose], k: usize| {
                    let [a, b, c] = [k - 1, k, k + 1].map(|i| p[c * n + leg[i]].position());
                    (a - b).cross(c - b)
                };
                let bending: &[usize] = if front == 1 { &[1] } else { &[1, 2] };
                for &k in bending {
                    if bend(&out, k).dot(bend(&poses, k)) < 0.0 {
                        flipped += 1;
                    }
                }
            }
        }
    }
    eprintln!(
        "Fox on hills: {} planted hoof-frames, tip to ground at most {:.2e} m; {} planted paw-frames, \
         paw bottom to ground at most {:.2e} m; {flipped} joints bent the other way",
        planted[0], worst[0], planted[1], worst[1]
    );
    assert!(planted[0] > 500 && planted[1] > 500, "{planted:?}");
    assert!(worst[0] < 1e-3 && worst[1] < 1e-3, "{worst:?}");
    assert_eq!(flipped, 0);
}

/// Every glTF file in Debian's assimp-testmodels (third-party files, among them files made
/// to be broken: indices out of range, a missing binary buffer, recursive nodes, schema
/// failures, wrong types, glTF 1.0) loads or is refused with a reason, never a panic; what
/// loads samples its clips and finds or refuses its rig.
#[test]
fn third_party_gltf_files_load_or_are_refused() {
    const ROOT: &str = "/usr/share/assimp/models";
    let mut files = Vec::new();
    let mut stack =
        vec![std::path::PathBuf::from(format!("{ROOT}/glTF2")), std::path::PathBuf::from(format!("{ROOT}/glTF"))];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "gltf" || x == "glb") {
                files.push(p);
            }
        }
    }
    if files.is_empty() {
        assert!(std::env::var("CI").map_or(true, |v| v != "true"), "CI=true but {ROOT} has no glTF files");
        eprintln!("SKIPPED: no glTF files under {ROOT} (apt-get install assimp-testmodels)");
        return;
    }
    let (mut loaded, mut refused, mut skinned) = (0, 0, 0);
    for path in &files {
        match GltfScene::load(path) {
            Ok(scene) => {
                loaded += 1;
                for sk in &scene.skins {
                    skinned += 1;
                    let _ = sk.foot_rig(BipedSettings::default(), 1.0);
                    for clip in &scene.clips {
                        let _ = clip.sample(sk, 0.5 * clip.duration);
                    }
                }
            }
            Err(e) => {
                refused += 1;
                eprintln!("refused {}: {e}", path.display());
                assert!(!e.to_string().is_empty());
            }
        }
    }
    eprintln!("{} glTF files: {loaded} loaded ({skinned} skins), {refused} refused", files.len());
    // The glTF 1.0 files are named as such.
    let v1 = std::path::Path::new(ROOT).join("glTF/TwoBoxes/TwoBoxes.gltf");
    if v1.exists() {
        let err = GltfScene::load(&v1).unwrap_err().to_string();
        assert!(err.contains("glTF 1.0 is not supported"), "{err}");
    }
    assert!(loaded >= 10 && refused >= 3, "{loaded} loaded, {refused} refused");
}

/// glTF's own skinning, as its specification writes it: each node's global matrix (every
/// node's TRS, the joints' from `clip` at `time` where it animates them) times the joint's
/// inverse bind matrix, weights blended. Read with the `gltf` crate itself, not the crate's
/// loader.
fn gltf_skinned(path: &str, clip: usize, time: f32, mesh: &crowd_ik::gltf::SkinnedMesh) -> Vec<Vec3> {
    use crowd_ik::glam::Mat4;
    let scene = GltfScene::load(path).unwrap();
    let doc = ::gltf::Gltf::open(path).unwrap().document;
    let nodes = doc.nodes().count();
    let mut parent = vec![None; nodes];
    for n in doc.nodes() {
        for c in n.children() {
            parent[c.index()] = Some(n.index());
        }
    }
    let skin = doc.skins().nth(mesh.skin).unwrap();
    let joint_nodes: Vec<usize> = skin.joints().map(|n| n.index()).collect();
    let sk = &scene.skins[mesh.skin];
    let local_joints = scene.clips[clip].sample_local(sk, time);
    let local: Vec<Mat4> = doc
        .nodes()
        .map(|n| match joint_nodes.iter().position(|&j| j == n.index()) {
            Some(j) => {
                let t = local_joints[j];
                Mat4::from_scale_rotation_translation(t.scale, t.rotation, t.translation)
            }
            None => Mat4::from_cols_array_2d(&n.transform().matrix()),
        })
        .collect();
    let global = |mut n: usize| {
        let mut m = local[n];
        while let Some(p) = parent[n] {
            m = local[p] * m;
            n = p;
        }
        m
    };
    let joint_matrix: Vec<Mat4> =
        joint_nodes.iter().zip(&sk.inverse_bind).map(|(&node, ib)| global(node) * *ib).collect();
    mesh.positions
        .iter()
        .zip(&mesh.joints)
        .zip(&mesh.weights)
        .map(|((p, j), w)| {
            (0..4).map(|k| joint_matrix[j[k] as usize].transform_point3(Vec3::from(*p)) * w[k]).sum::<Vec3>()
        })
        .collect()
}

/// The crate's skinning palette (rigid joint poses from the clip × the skeleton's
/// `palette_inverse_bind`) skins each test character's mesh as glTF does, at several times
/// of every clip: the same vertices within 1e-5 × the character's size. Z-up files,
/// centimetre rigs (the Fox's 0.01 scale above its joints) and bind poses that differ from
/// the rest pose included; mirrored characters and limbs (negative scales) too.
#[test]
fn the_crates_palette_skins_meshes_as_gltf_does() {
    use crowd_ik::cpu::palette::palette;
    let mut files: Vec<String> =
        ["CesiumMan.glb", "Fox.glb", "ik_helper_humanoid.gltf"].iter().map(|f| format!("{DATA}/{f}")).collect();
    // Under an exporter's armature node: a unit scale (0.01 as Mixamo and Blender's
    // centimetre exports, or 100) and a Z-up turn, folded into the joints' scale.
    let dir = std::env::temp_dir().join(format!("crowd-ik-palette-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Mirrored: the whole Fox under a reflecting node (x, or all three axes: a point
    // reflection), Cesium Man in centimetres with a half turn (two negative axes).
    for (file, scale) in [
        ("CesiumMan.glb", [0.01_f32; 3]),
        ("Fox.glb", [100.0; 3]),
        ("Fox.glb", [-1.0, 1.0, 1.0]),
        ("Fox.glb", [-1.0, -1.0, -1.0]),
        ("CesiumMan.glb", [0.01, -0.01, -0.01]),
    ] {
        let (mut j, bin) = unglb(&std::fs::read(format!("{DATA}/{file}")).unwrap());
        let wrapper = j["nodes"].as_array().unwrap().len();
        let roots = j["scenes"][0]["nodes"].clone();
        let turn = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        j["nodes"].as_array_mut().unwrap().push(serde_json::json!({
            "name": "Armature", "children": roots, "scale": scale, "rotation": turn.to_array()
        }));
        j["scenes"][0]["nodes"] = serde_json::json!([wrapper]);
        let path = dir.join(format!("{scale:?}-{file}"));
        std::fs::write(&path, glb(&j, &bin)).unwrap();
        files.push(path.to_string_lossy().into_owned());
    }
    // A limb exported mirrored (a −1 scale at the hip, the leg's frames reflected).
    let (mut j, mut bin) = unglb(&std::fs::read(format!("{DATA}/CesiumMan.glb")).unwrap());
    let hip = j["nodes"].as_array().unwrap().iter().position(|n| n["name"] == "leg_joint_L_1").unwrap();
    mirror_subtree(&mut j, &mut bin, hip);
    let path = dir.join("mirrored-leg-CesiumMan.glb");
    std::fs::write(&path, glb(&j, &bin)).unwrap();
    files.push(path.to_string_lossy().into_owned());
    let simple = "/usr/share/assimp/models/glTF2/simple_skin/simple_skin.gltf";
    if std::path::Path::new(simple).exists() {
        files.push(simple.into());
    }
    for path in &files {
        let scene = GltfScene::load(path).unwrap();
        assert!(!scene.meshes.is_empty(), "{path}");
        for mesh in &scene.meshes {
            let sk = &scene.skins[mesh.skin];
            let inverse_bind = sk.palette_inverse_bind().unwrap();
            // From the file's inverse bind matrices alone (what a renderer such as Bevy has,
            // its model space the skinned mesh node's): the same matrices, for files whose
            // nodes above the skin are rigid (a wrapper's scale or reflection is the mesh
            // node's too, not the skin's).
            let wrapped = path.contains("]-");
            let rigid = if wrapped { Vec::new() } else { crowd_ik::cpu::palette::rigid_inverse_bind(&sk.inverse_bind) };
            for (a, b) in rigid.iter().zip(&inverse_bind) {
                let size = b.w_axis.truncate().length().max(b.x_axis.truncate().length());
                assert!(a.abs_diff_eq(*b, 1e-5 * size.max(1.0)), "{path}: {a} vs {b}");
            }
            for (c, clip) in scene.clips.iter().enumerate() {
                for k in 0..5 {
                    let time = clip.duration * k as f32 / 4.0;
                    let want = gltf_skinned(path, c, time, mesh);
                    let size = want.iter().fold(Vec3::splat(f32::MIN), |a, p| a.max(*p))
                        - want.iter().fold(Vec3::splat(f32::MAX), |a, p| a.min(*p));
                    let pose = clip.sample(sk, time).unwrap();
                    let mut matrices = vec![crowd_ik::glam::Mat4::IDENTITY; pose.len()];
                    palette(&pose, &inverse_bind, &mut matrices);
                    let mut worst = 0.0f32;
                    for ((v, j), (w, want)) in
                        mesh.positions.iter().zip(&mesh.joints).zip(mesh.weights.iter().zip(&want))
                    {
                        let got: Vec3 =
                            (0..4).map(|k| matrices[j[k] as usize].transform_point3(Vec3::from(*v)) * w[k]).sum();
                        worst = worst.max(got.distance(*want));
                    }
                    let tol = 1e-5 * size.max_element();
                    assert!(worst <= tol, "{path}, clip {:?} at {time} s: {worst} > {tol}", clip.name);
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A limb mirrored the way a modelling tool's "mirror joints" exports it: `node`'s scale
/// gets a −1 on x (its frame reflected), every node below it its translation and rotation
/// seen in that mirror (`F t`, `F R F`, F = diag(−1, 1, 1)), every joint of the subtree its
/// inverse bind matrix `F · IBM`, and the animation channels on them likewise. Each joint's
/// global transform becomes the original's times `F`: the same joint positions, the same
/// skinned vertices, reflected frames.
fn mirror_subtree(json: &mut serde_json::Value, bin: &mut [u8], node: usize) {
    let kids = |j: &serde_json::Value, n: usize| -> Vec<usize> {
        j["nodes"][n]["children"]
            .as_array()
            .map_or(Vec::new(), |c| c.iter().map(|v| v.as_u64().unwrap() as usize).collect())
    };
    let mut below = Vec::new();
    let mut stack = kids(json, node);
    while let Some(n) = stack.pop() {
        stack.extend(kids(json, n));
        below.push(n);
    }
    let floats = |j: &serde_json::Value, acc: usize| -> (usize, usize, usize, usize) {
        // (byte offset, count, components, stride) of a float accessor.
        let a = &j["accessors"][acc];
        assert_eq!(a["componentType"], 5126, "float accessors only");
        let view = &j["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let comps = match a["type"].as_str().unwrap() {
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            t => panic!("{t}"),
        };
        let offset = view["byteOffset"].as_u64().unwrap_or(0) + a["byteOffset"].as_u64().unwrap_or(0);
        let stride = view["byteStride"].as_u64().map_or(4 * comps, |s| s as usize);
        (offset as usize, a["count"].as_u64().unwrap() as usize, comps, stride)
    };
    let negate = |bin: &mut [u8], (offset, count, _, stride): (usize, usize, usize, usize), comps: &[usize]| {
        for e in 0..count {
            for &c in comps {
                let at = offset + e * stride + 4 * c;
                let v = -f32::from_le_bytes(bin[at..at + 4].try_into().unwrap());
                bin[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
    };
    let n = &mut json["nodes"][node];
    if let Some(m) = n["matrix"].as_array_mut() {
        for v in &mut m[0..4] {
            *v = serde_json::json!(-v.as_f64().unwrap());
        }
    } else {
        let s = n["scale"].as_array().map_or([1.0, 1.0, 1.0], |s| [0, 1, 2].map(|i| s[i].as_f64().unwrap()));
        n["scale"] = serde_json::json!([-s[0], s[1], s[2]]);
    }
    for &b in &below {
        let n = &mut json["nodes"][b];
        if let Some(m) = n["matrix"].as_array_mut() {
            for (i, v) in m.iter_mut().enumerate() {
                if (i % 4 == 0) != (i / 4 == 0) {
                    *v = serde_json::json!(-v.as_f64().unwrap());
                }
            }
            continue;
        }
        if let Some(t) = n["translation"].as_array_mut() {
            t[0] = serde_json::json!(-t[0].as_f64().unwrap());
        }
        if let Some(r) = n["rotation"].as_array_mut() {
            for v in &mut r[1..3] {
                *v = serde_json::json!(-v.as_f64().unwrap());
            }
        }
    }
    let subtree: Vec<usize> = std::iter::once(node).chain(below.iter().copied()).collect();
    let skins = json["skins"].as_array().cloned().unwrap_or_default();
    for skin in &skins {
        let joints: Vec<usize> =
            skin["joints"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        let acc = floats(json, skin["inverseBindMatrices"].as_u64().unwrap() as usize);
        for (k, j) in joints.iter().enumerate() {
            if subtree.contains(j) {
                // F · IBM: the matrix's first row (column-major 0, 4, 8, 12).
                negate(bin, (acc.0 + k * acc.3, 1, 16, acc.3), &[0, 4, 8, 12]);
            }
        }
    }
    let mut done = std::collections::HashSet::new();
    for anim in json["animations"].as_array().cloned().unwrap_or_default() {
        for ch in anim["channels"].as_array().unwrap() {
            let target = ch["target"]["node"].as_u64().unwrap() as usize;
            let sampler = &anim["samplers"][ch["sampler"].as_u64().unwrap() as usize];
            let out = sampler["output"].as_u64().unwrap() as usize;
            let comps: &[usize] =
                match (target == node, below.contains(&target), ch["target"]["path"].as_str().unwrap()) {
                    (true, _, "scale") => &[0],
                    (false, true, "translation") => &[0],
                    (false, true, "rotation") => &[1, 2],
                    _ => continue,
                };
            assert!(done.insert(out), "an output accessor shared between channels");
            negate(bin, floats(json, out), comps);
        }
    }
}

/// Mirrored limbs: Cesium Man with its left leg exported mirrored (a −1 scale at the hip,
/// the leg's frames reflected), and the whole Fox under a mirroring armature node, load with
/// proper rotations; the mirrored leg has the same joint positions at every time, the same
/// rig and the same foot IK on a slope as the original file, and the crate's palette skins
/// it as glTF does (the palette test below runs both files).
#[test]
fn mirrored_limbs_solve_as_the_unmirrored_character() {
    use crowd_ik::cpu::foot_ik::FootIkJob;
    use crowd_ik::crowd::{CharacterInput, FootResult, Ground};
    let original = load("CesiumMan.glb");
    let (mut j, mut bin) = unglb(&std::fs::read(format!("{DATA}/CesiumMan.glb")).unwrap());
    let hip = j["nodes"].as_array().unwrap().iter().position(|n| n["name"] == "leg_joint_L_1").unwrap();
    mirror_subtree(&mut j, &mut bin, hip);
    let mirrored = GltfScene::from_slice(&glb(&j, &bin), None).unwrap();
    let (a, b) = (&original.skins[0], &mirrored.skins[0]);
    assert_ne!(a.rest, b.rest, "the file is not mirrored");
    let leg = a.find_legs(Vec3::Y).unwrap();
    assert_eq!(b.find_legs(Vec3::Y).unwrap(), leg);
    for pose in [a.rest_pose().unwrap(), b.rest_pose().unwrap()] {
        for p in &pose {
            assert!((p.rotation().length() - 1.0).abs() < 1e-5 && p.position().is_finite());
        }
    }
    let settings = BipedSettings::default();
    let (rig_a, rig_b) = (original.foot_rig(0, settings, 1.0).unwrap(), mirrored.foot_rig(0, settings, 1.0).unwrap());
    for (la, lb) in rig_a.legs.iter().zip(&rig_b.legs) {
        assert!((la.foot_height - lb.foot_height).abs() < 1e-5, "{} vs {}", la.foot_height, lb.foot_height);
        assert!((la.heel_length - lb.heel_length).abs() < 1e-4 && (la.toe_length - lb.toe_length).abs() < 1e-4);
    }
    let slope = Ground::Heightfield(
        crowd_ik::crowd::Heightfield::from_fn(crowd_ik::glam::Vec2::splat(-3.0), 0.1, 61, 61, |x, z| {
            0.3 * x + 0.2 * z + 0.05 * (3.0 * x).sin()
        })
        .unwrap(),
    );
    let (clip_a, clip_b) = (&original.clips[0], &mirrored.clips[0]);
    let (mut worst_pose, mut worst_ik) = (0.0_f32, 0.0_f32);
    for k in 0..40 {
        let t = k as f32 * 0.05;
        let (pa, pb) = (clip_a.sample(a, t).unwrap(), clip_b.sample(b, t).unwrap());
        for (x, y) in pa.iter().zip(&pb) {
            worst_pose = worst_pose.max(x.position().distance(y.position()));
        }
        let chars = [CharacterInput::new(Vec3::new(0.0, -0.05, 0.0), Quat::from_rotation_y(0.4))
            .with_foot_weights([1.0, 1.0, 0.0, 0.0])];
        let solve = |rig, pose: &[JointPose]| {
            let mut out = vec![JointPose::default(); pose.len()];
            let mut res = [FootResult::default()];
            FootIkJob::new(rig, &slope, &chars, pose, &mut out, &mut res).run().unwrap();
            out
        };
        let (oa, ob) = (solve(&rig_a, &pa), solve(&rig_b, &pb));
        for (x, y) in oa.iter().zip(&ob) {
            worst_ik = worst_ik.max(x.position().distance(y.position()));
        }
    }
    eprintln!("mirrored left leg: joints {worst_pose:.1e} m from the original's, foot IK {worst_ik:.1e} m");
    assert!(worst_pose < 1e-5 && worst_ik < 2e-5, "{worst_pose} {worst_ik}");

    // The whole character under a reflecting node: its mirror image, which foot IK solves
    // as the mirror image of the original's solve on the mirrored ground.
    let (mut j, bin) = unglb(&std::fs::read(format!("{DATA}/CesiumMan.glb")).unwrap());
    let wrapper = j["nodes"].as_array().unwrap().len();
    let roots = j["scenes"][0]["nodes"].clone();
    j["nodes"].as_array_mut().unwrap().push(serde_json::json!({ "children": roots, "scale": [-1.0, 1.0, 1.0] }));
    j["scenes"][0]["nodes"] = serde_json::json!([wrapper]);
    let image = GltfScene::from_slice(&glb(&j, &bin), None).unwrap();
    let c = &image.skins[0];
    let rig_c = image.foot_rig(0, settings, 1.0).unwrap();
    let flip = |v: Vec3| Vec3::new(-v.x, v.y, v.z);
    let ground = |sign: f32| {
        Ground::Heightfield(
            crowd_ik::crowd::Heightfield::from_fn(crowd_ik::glam::Vec2::splat(-3.0), 0.1, 61, 61, move |x, z| {
                0.25 * z + 0.3 * (sign * x) + 0.05 * (3.0 * sign * x).sin()
            })
            .unwrap(),
        )
    };
    let (ground_a, ground_c) = (ground(1.0), ground(-1.0));
    let (mut worst_image, mut worst_move) = (0.0_f32, 0.0_f32);
    for k in 0..40 {
        let t = k as f32 * 0.05;
        let (pa, pc) = (clip_a.sample(a, t).unwrap(), image.clips[0].sample(c, t).unwrap());
        let solve = |rig, ground: &Ground, heading: f32, pose: &[JointPose]| {
            let chars = [CharacterInput::new(Vec3::new(0.0, -0.05, 0.0), Quat::from_rotation_y(heading))
                .with_foot_weights([1.0, 1.0, 0.0, 0.0])];
            let mut out = vec![JointPose::default(); pose.len()];
            let mut res = [FootResult::default()];
            FootIkJob::new(rig, ground, &chars, pose, &mut out, &mut res).run().unwrap();
            out.iter().map(|p| chars[0].to_world(p.position())).collect::<Vec<_>>()
        };
        let (oa, oc) = (solve(&rig_a, &ground_a, 0.4, &pa), solve(&rig_c, &ground_c, -0.4, &pc));
        for ((x, y), p) in oa.iter().zip(&oc).zip(&pa) {
            worst_image = worst_image.max(flip(*x).distance(*y));
            worst_move = worst_move.max(x.distance(chars_world(0.4, p.position())));
        }
    }
    eprintln!("mirrored character: foot IK {worst_image:.1e} m from the mirror image of the original's (IK moved joints up to {worst_move:.2} m)");
    assert!(worst_move > 0.02, "the ground did not move the feet");
    assert!(worst_image < 2e-5, "{worst_image}");
}

/// A model-space point of a character at the origin 5 cm down, turned `heading` about +Y.
fn chars_world(heading: f32, p: Vec3) -> Vec3 {
    Quat::from_rotation_y(heading) * p + Vec3::new(0.0, -0.05, 0.0)
}

/// A shoe whose front bends with its toe joint (Cesium Man's) rests on the ground through a
/// whole walk, toe offs included: every frame the clip plants a foot (0/1 weights), on flat
/// ground and on a 0.3 slope walked up and across, the skinned foot's lowest vertex (CPU
/// foot IK, the crate's palette) lies within 3 mm of the ground. The same rig with its sole
/// straight on with the foot (`toe_forward` zero) floats at toe off, the shoe's tip taken as
/// pitched down with the foot.
#[test]
fn a_shoe_that_bends_with_its_toes_rests_on_the_ground_at_toe_off() {
    use crowd_ik::cpu::foot_ik::FootIkJob;
    use crowd_ik::cpu::palette::palette;
    use crowd_ik::crowd::{CharacterInput, FootResult, Ground, Heightfield};
    use crowd_ik::glam::{Mat4, Vec2};
    use crowd_ik_tools::character::{contact_weights, floor, frames, skinned_foot_gap};
    let scene = load("CesiumMan.glb");
    let (sk, mesh) = (&scene.skins[0], &scene.meshes[0]);
    let bent = scene.foot_rig(0, BipedSettings::default(), 1.0).unwrap();
    assert!(bent.legs.iter().all(|l| l.toe_length > 0.01 && l.toe_forward != Vec3::ZERO));
    let mut straight = bent.clone();
    for leg in &mut straight.legs {
        leg.toe_forward = Vec3::ZERO;
    }
    let clip = scene.clips[0].bake(sk, 60.0, RootMotion::Extract).unwrap();
    let poses = frames(&clip);
    let floor = floor(&bent, &poses);
    let inverse_bind = sk.palette_inverse_bind().unwrap();
    let feet = [sk.below(bent.legs[0].joints[2]), sk.below(bent.legs[1].joints[2])];
    let slope = Heightfield::from_fn(Vec2::splat(-5.0), 0.25, 41, 41, |x, z| 0.3 * x + 0.05 * z).unwrap();
    let flat = Heightfield::from_fn(Vec2::splat(-5.0), 0.25, 41, 41, |_, _| 0.0).unwrap();
    let worst = |rig: &crowd_ik::crowd::FootRig| {
        let (mut worst, mut planted) = (0.0_f32, 0);
        for (hf, heading) in [(&flat, 0.0_f32), (&slope, -std::f32::consts::FRAC_PI_2), (&slope, 0.0)] {
            let ground = Ground::Heightfield(hf.clone());
            for pose in &poses {
                let w = contact_weights(rig, pose, floor);
                let root = Vec3::new(0.0, hf.sample(0.0, 0.0).unwrap().0 - floor, 0.0);
                let chars =
                    [CharacterInput::new(root, Quat::from_rotation_y(heading))
                        .with_foot_weights([w[0], w[1], 0.0, 0.0])];
                let mut out = vec![JointPose::default(); sk.len()];
                let mut res = [FootResult::default()];
                FootIkJob::new(rig, &ground, &chars, pose, &mut out, &mut res).run().unwrap();
                let mut matrices = vec![Mat4::IDENTITY; sk.len()];
                palette(&out, &inverse_bind, &mut matrices);
                for l in 0..2 {
                    if w[l] < 1.0 {
                        continue;
                    }
                    let gap = skinned_foot_gap(mesh, &matrices, &feet[l], &chars[0], hf);
                    planted += 1;
                    worst = worst.max(gap.abs());
                }
            }
        }
        (worst, planted)
    };
    let (bent_worst, planted) = worst(&bent);
    let (straight_worst, _) = worst(&straight);
    eprintln!(
        "Cesium Man, {planted} planted foot-frames: the shoe's lowest point within {bent_worst:.4} m of the ground \
         (a sole straight with the foot: {straight_worst:.4} m)"
    );
    assert!(planted > 150, "{planted}");
    assert!(bent_worst <= 0.003, "{bent_worst}");
    assert!(straight_worst > 0.006, "the test sees toe offs: {straight_worst}");
}
