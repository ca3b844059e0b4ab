//! The WGSL records (parsed by naga) have exactly the Rust records' sizes and member offsets,
//! the WGSL status/option/info constants equal the Rust ones, no shader declares a shared
//! constant by hand, and the source tree keeps its layering (no import cycle).

use std::collections::HashMap;
use std::mem::{offset_of, size_of};

use crowd_ik::prelude::*;
use crowd_ik::records::LimbSettings;
use crowd_ik::ChainError;

/// `shaders/shared/records.wgsl` with its imports (the generated `constants` module).
fn module() -> naga::Module {
    naga::front::wgsl::parse_str(crowd_ik::gpu::shaders::RECORDS_WGSL).expect("records.wgsl parses")
}

/// name → (size, [(member, offset)]) for every WGSL struct, with naga's layout.
fn wgsl_structs(module: &naga::Module) -> HashMap<String, (u32, Vec<(String, u32)>)> {
    let mut out = HashMap::new();
    for (_, ty) in module.types.iter() {
        if let (Some(name), naga::TypeInner::Struct { members, span }) = (&ty.name, &ty.inner) {
            let members = members.iter().map(|m| (m.name.clone().unwrap_or_default(), m.offset)).collect();
            out.insert(name.clone(), (*span, members));
        }
    }
    out
}

macro_rules! check_struct {
    ($structs:expr, $wgsl:literal, $rust:ty, [$($field:ident),+ $(,)?]) => {{
        let (span, members) = $structs.get($wgsl).unwrap_or_else(|| panic!("no struct {} in records.wgsl", $wgsl));
        assert_eq!(*span as usize, size_of::<$rust>(), "size of {} vs {}", $wgsl, stringify!($rust));
        let rust: Vec<(String, u32)> = vec![$((stringify!($field).to_string(), offset_of!($rust, $field) as u32)),+];
        assert_eq!(members, &rust, "members of {} vs {}", $wgsl, stringify!($rust));
    }};
}

#[test]
fn wgsl_records_match_rust_records() {
    let m = module();
    let s = wgsl_structs(&m);
    check_struct!(s, "LimbSettings", LimbSettings, [target_ms, pole_ms, mid_axis, params, mode]);
    check_struct!(s, "TwoBoneChain", TwoBoneChain, [joints_ms, rotations_ms, limb, effector_offset]);
    check_struct!(s, "ThreeBoneChain", ThreeBoneChain, [joints_ms, rotations_ms, limb, blend]);
    check_struct!(s, "FabrikChain", FabrikChain, [joints_ms, rotations_ms, target_ms, params, mode]);
    check_struct!(s, "TwoBoneSolved", TwoBoneSolved, [positions_ms, rotations_ms, corrections, status]);
    check_struct!(s, "ThreeBoneSolved", ThreeBoneSolved, [positions_ms, rotations_ms, corrections, status]);
    check_struct!(s, "FabrikSolved", FabrikSolved, [positions_ms, rotations_ms, corrections, status]);
    check_struct!(s, "LimitedChain", ConstrainedFabrikChain, [chain, limits]);
    check_struct!(s, "LimitedChain", CcdChain, [chain, limits]);
    check_struct!(s, "DlsGoal", crowd_ik::records::DlsGoal, [orientation_ms, settings, starts, stiffness]);
    check_struct!(s, "DlsChain", DlsChain, [chain, limits, goal]);
    check_struct!(
        s,
        "LookAtChain",
        LookAtChain,
        [joints_ms, rotations_ms, forward, up, rest, limits, parent_ms, target_ms, up_target_ms, mode]
    );
    assert_eq!(std::mem::size_of::<LookAtSolved>(), std::mem::size_of::<ThreeBoneSolved>());
    check_struct!(
        s,
        "MultiFabrikChain",
        MultiFabrikChain,
        [joints_ms, rotations_ms, targets_ms, parents, effectors, params, mode]
    );
    check_struct!(s, "MultiFabrikSolved", MultiFabrikSolved, [positions_ms, rotations_ms, corrections, status]);
    check_struct!(s, "TreeLimits", crowd_ik::TreeLimits, [parent_ms, kinds, joints]);
    check_struct!(
        s,
        "DlsTreeGoal",
        crowd_ik::records::DlsTreeGoal,
        [orientations_ms, orientation_weights, root_translation, starts, stiffness]
    );
    check_struct!(s, "DlsTree", crowd_ik::DlsTree, [tree, limits, goal]);
    assert_eq!(s["DispatchParams"].0, 16);
}

#[test]
fn wgsl_crowd_records_match_rust_records() {
    use crowd_ik::crowd::*;
    let m = naga::front::wgsl::parse_str(crowd_ik::gpu::shaders::FOOT_IK_WGSL).unwrap();
    let s = wgsl_structs(&m);
    check_struct!(s, "JointPose", JointPose, [position_ms, rotation_ms]);
    check_struct!(s, "CharacterInput", CharacterInput, [root_ws, root_rotation, foot_weights, foot_event_times]);
    check_struct!(s, "GroundHit", GroundHit, [point_ws, normal_ws]);
    check_struct!(s, "FootResult", FootResult, [pelvis, sole_before, sole_after, status]);
    check_struct!(s, "SolverLeg", SolverLeg, [joints, mode, knee_axis, limits, foot_up, pole, lock, sole, toe]);
    check_struct!(s, "SolverRig", SolverRig, [header, grid, ground, params, springs, blend, legs]);
    check_struct!(
        s,
        "LegState",
        LegState,
        [plane, plane_velocity, plane_goal, lock, fk, heading, lift, motion, free, free_heading]
    );
    check_struct!(s, "CharacterState", CharacterState, [pelvis, root, flags, root_velocity, legs]);
    check_struct!(s, "FrameInput", FrameInput, [dt, pelvis_decay, ground_decay, plant_decay]);
}

/// Every uniform struct a shader declares has its Rust twin's size and member offsets.
#[test]
fn wgsl_uniforms_match_rust_uniforms() {
    use crowd_ik::gpu::buffers::DispatchParams;
    use crowd_ik::gpu::pose_source::ClipParams;
    use crowd_ik::gpu::shaders::CLIP_SAMPLE_WGSL;
    use crowd_ik_tools::preview::CameraUniform;
    let s = wgsl_structs(&module());
    check_struct!(s, "DispatchParams", DispatchParams, [count, groups_x, joints, reserved]);
    let s = wgsl_structs(&naga::front::wgsl::parse_str(CLIP_SAMPLE_WGSL).unwrap());
    check_struct!(
        s,
        "ClipParams",
        ClipParams,
        [count, groups_x, joints, frames, time, frame_time, reserved0, reserved1]
    );
    let preview = naga::front::wgsl::parse_str(&crowd_ik_tools::preview::preview_wgsl()).unwrap();
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
        .validate(&preview)
        .expect("the preview shader validates");
    let s = wgsl_structs(&preview);
    check_struct!(s, "Camera", CameraUniform, [view_proj, light_dir, joints]);
}

#[test]
fn wgsl_constants_match_rust_constants() {
    let m = module();
    let mut consts = HashMap::new();
    for (_, c) in m.constants.iter() {
        if let (Some(name), naga::Expression::Literal(naga::Literal::U32(v))) = (&c.name, &m.global_expressions[c.init])
        {
            consts.insert(name.clone(), *v);
        }
    }
    let errors = [
        ("ERR_NON_FINITE", ChainError::NonFinite),
        ("ERR_ZERO_LENGTH_BONE", ChainError::ZeroLengthBone),
        ("ERR_TARGET_ON_ROOT", ChainError::TargetOnRoot),
        ("ERR_POLE_ON_AXIS", ChainError::PoleOnAxis),
        ("ERR_DEGENERATE_MID_AXIS", ChainError::DegenerateMidAxis),
        ("ERR_INVALID_PARAMETER", ChainError::InvalidParameter),
        ("ERR_JOINT_COUNT", ChainError::JointCount),
        ("ERR_NOT_NORMALIZED", ChainError::NotNormalized),
    ];
    for (name, e) in errors {
        assert_eq!(consts[name], e.code(), "{name}");
    }
    let others = [
        ("OPT_KNEE_LIMITS", option::KNEE_LIMITS),
        ("OPT_KEEP_END_ROTATION", option::KEEP_END_ROTATION),
        ("OPT_COPY_MID_ROTATION", option::COPY_MID_ROTATION),
        ("OPT_MIRRORED", option::MIRRORED),
        ("OPT_ROOT_FIRST", option::ROOT_FIRST),
        ("OPT_UP_TARGET", option::UP_TARGET),
        ("OPT_SHORTEST_ARC", option::SHORTEST_ARC),
        ("OPT_KEEP_ROOT_ROTATION", option::KEEP_ROOT_ROTATION),
        ("OPT_ALIGN_HINGES", option::ALIGN_HINGES),
        ("OPT_LIMB", option::LIMB),
        ("OPT_FABRIK", option::FABRIK),
        ("OPT_CONSTRAINED_FABRIK", option::CONSTRAINED_FABRIK),
        ("OPT_CCD", option::CCD),
        ("OPT_LOOK_AT", option::LOOK_AT),
        ("OPT_MULTI_FABRIK", option::MULTI_FABRIK),
        ("POLE_FK_PLANE", PoleMode::FkPlane as u32),
        ("POLE_POSITION", PoleMode::Position as u32),
        ("POLE_DIRECTION", PoleMode::Direction as u32),
        ("POLE_SWIVEL", PoleMode::Swivel as u32),
        ("BEND_HINGE", BendMode::Hinge as u32),
        ("BEND_KEEP_FK", BendMode::KeepFk as u32),
        ("BEND_REVERSED", BendMode::Reversed as u32),
        ("INFO_SOFTENED", info::SOFTENED),
        ("INFO_KNEE_LIMITED", info::KNEE_LIMITED),
        ("INFO_STRETCHED", info::STRETCHED),
        ("INFO_OUT_OF_REACH", info::OUT_OF_REACH),
        ("INFO_SWIVEL_FALLBACK", info::SWIVEL_FALLBACK),
        ("MAX_FABRIK_JOINTS", crowd_ik::MAX_FABRIK_JOINTS as u32),
        ("MAX_FABRIK_ITERATIONS", crowd_ik::cpu::MAX_FABRIK_ITERATIONS),
    ];
    for (name, v) in others {
        assert_eq!(consts[name], v, "{name}");
    }
}

#[test]
fn every_kernel_is_valid_wgsl_with_its_reflected_workgroup_size() {
    use crowd_ik::gpu::shaders::*;
    let fabrik = FABRIK_WGSL.iter().map(|&(_, source)| ("fabrik", source, FABRIK_WORKGROUP_SIZE));
    for (name, source, size) in [
        ("two_bone", TWO_BONE_WGSL, TWO_BONE_WORKGROUP_SIZE),
        ("three_bone", THREE_BONE_WGSL, THREE_BONE_WORKGROUP_SIZE),
        ("foot_ik", FOOT_IK_WGSL, FOOT_IK_WORKGROUP_SIZE),
    ]
    .into_iter()
    .chain(fabrik)
    {
        let module = naga::front::wgsl::parse_str(source).unwrap();
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
            .validate(&module)
            .unwrap();
        let ep = module.entry_points.iter().find(|e| e.name == name).unwrap();
        assert_eq!(ep.workgroup_size, size);
        assert!(size[0] >= 32, "{name}: workgroups of at least a warp");
    }
}

/// FABRIK is compiled once per joint count with its `// unroll` loops expanded: every
/// variant has its own `N`, both entry points, no marker left, and no loop over joints in
/// `solve` but the iterations (the zeroing of unused slots lives in `clear_past`, before it).
#[test]
fn fabrik_has_one_unrolled_variant_per_joint_count() {
    use crowd_ik::gpu::shaders::FABRIK_WGSL;
    let counts: Vec<u32> = FABRIK_WGSL.iter().map(|&(n, _)| n).collect();
    assert_eq!(counts, (2..=crowd_ik::MAX_FABRIK_JOINTS as u32).collect::<Vec<_>>());
    for &(n, source) in &FABRIK_WGSL {
        assert!(source.starts_with(&format!("const N: u32 = {n}u;\n")), "N = {n}");
        assert!(!source.lines().any(|l| l.trim() == "// unroll"), "N = {n}: a marker was not expanded");
        let kernel = &source[source.find("fn solve(").unwrap()..];
        let loops: Vec<&str> = kernel.lines().map(str::trim).filter(|l| l.starts_with("for (")).collect();
        assert_eq!(loops, ["for (var it = 0u; it < iters; it++) {"], "N = {n}");
        // Five loops over joints in `solve`: two of N steps, three of N - 1 (the checks, the
        // bone measures, the backward pass and the finishing, shared with the limited
        // kernels, are in fabrik_chain.wgsl).
        assert_eq!(kernel.matches("let k = ").count() as u32, 5 * n - 3, "N = {n}");
        let module = naga::front::wgsl::parse_str(source).unwrap();
        for entry in ["fabrik", "fabrik_joint_count_error"] {
            assert!(module.entry_points.iter().any(|e| e.name == entry), "N = {n}: {entry}");
        }
    }
}

#[test]
fn the_renderer_guide_skinning_snippet_is_valid_wgsl() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/renderer.md")).unwrap();
    let start = readme.find("```wgsl\n").expect("a wgsl block in docs/renderer.md") + "```wgsl\n".len();
    let snippet = &readme[start..start + readme[start..].find("```").unwrap()];
    let module = naga::front::wgsl::parse_str(snippet).unwrap_or_else(|e| panic!("{}", e.emit_to_string(snippet)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(snippet)));
    assert!(module.functions.iter().any(|(_, f)| f.name.as_deref() == Some("skin_to_world")));
}

/// Each shared constant is written once, in `src/constants.rs`: the generated WGSL module
/// holds the same values as the Rust constants (f32 bit for bit), and no file under
/// `shaders/` declares one by hand.
#[test]
fn shared_constants_have_one_source() {
    use crowd_ik::gpu::shaders::{CONSTANTS_WGSL, CONSTANT_NAMES};
    let m = naga::front::wgsl::parse_str(CONSTANTS_WGSL).unwrap();
    let mut wgsl = HashMap::new();
    for (_, c) in m.constants.iter() {
        let value = match &m.global_expressions[c.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => f64::from(*v),
            naga::Expression::Literal(naga::Literal::F32(v)) => f64::from(*v),
            other => panic!("{:?}: unexpected {other:?}", c.name),
        };
        wgsl.insert(c.name.clone().unwrap(), value);
    }
    use crowd_ik::constants as c;
    let rust: &[(&str, f64)] = &[
        ("ZERO_BONE", f64::from(c::ZERO_BONE)),
        ("ON_ROOT", f64::from(c::ON_ROOT)),
        ("POLE_ON_AXIS2", f64::from(c::POLE_ON_AXIS2)),
        ("MIN_HINGE", f64::from(c::MIN_HINGE)),
        ("STRAIGHT", f64::from(c::STRAIGHT)),
        ("UNIT_QUAT_TOLERANCE", f64::from(c::UNIT_QUAT_TOLERANCE)),
        ("MIN_GROUND_NORMAL_Y", f64::from(c::MIN_GROUND_NORMAL_Y)),
        ("MAX_LEGS", crowd_ik::crowd::MAX_LEGS as f64),
        ("NONE", f64::from(crowd_ik::crowd::NONE)),
        ("FOOT_HIT", f64::from(crowd_ik::crowd::foot::HIT)),
        ("FOOT_SOLVED", f64::from(crowd_ik::crowd::foot::SOLVED)),
        ("FOOT_REACHED", f64::from(crowd_ik::crowd::foot::REACHED)),
        ("FOOT_ANGLE_LIMITED", f64::from(crowd_ik::crowd::foot::ANGLE_LIMITED)),
        ("FOOT_KNEE_LIMITED", f64::from(crowd_ik::crowd::foot::KNEE_LIMITED)),
    ];
    for (name, value) in rust {
        assert_eq!(wgsl[*name], *value, "{name}");
    }
    assert_eq!(wgsl.len(), CONSTANT_NAMES.len());
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");
    let files: Vec<_> = ["kernels", "shared"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(format!("{root}/{dir}")).unwrap())
        .map(|entry| entry.unwrap().path())
        .collect();
    assert!(files.len() > 20, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            if let Some(rest) = line.trim().strip_prefix("const ") {
                let name = rest.split(':').next().unwrap().trim();
                assert!(!CONSTANT_NAMES.contains(&name), "{}: declares {name}; import `constants`", path.display());
            }
        }
    }
}

/// The crate's modules form layers with no import cycle: `constants`, `records`, `error` at
/// the bottom, `crowd` (rig, ground, records) above them, the CPU solvers (`cpu`) and the GPU
/// objects (`gpu`) beside each other above that, loaders (`bvh`) on top. Read from the `use crate::…` and
/// `crate::…` paths of every file under `src/`.
#[test]
fn source_modules_have_no_import_cycle() {
    use std::collections::{BTreeMap, BTreeSet};
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(src)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    // Top-level module of each file (`src/cpu/wide/isa.rs` → `cpu`, `src/error.rs` → `error`).
    let module_of = |path: &std::path::Path| -> String {
        let rel = path.strip_prefix(src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|p| module_of(p)).filter(|m| m != "lib").collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let from = module_of(path);
        if from == "lib" {
            continue; // the crate root re-exports; it is not a layer
        }
        // Code only: a doc comment may link to any layer.
        let text: String = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        // Internal code names each item from its home module, not through the crate root's
        // re-exports (which are for users).
        for name in ["crate::ChainError", "crate::IkError", "crate::{"] {
            assert!(!text.contains(name), "{}: `{name}` through the crate root", path.display());
        }
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let preceded = text[..at].chars().last().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            if !preceded && modules.contains(&name) && name != from {
                edges.entry(from.clone()).or_default().insert(name);
            }
        }
    }
    // The bottom layer (records, constants, errors and the CPU path's name) imports only
    // itself.
    let bottom = ["records", "constants", "error", "cpu_path"];
    for m in bottom {
        let up: Vec<_> = edges.get(m).into_iter().flatten().filter(|n| !bottom.contains(&n.as_str())).collect();
        assert!(up.is_empty(), "{m} (bottom layer) imports {up:?}");
    }
    assert!(!edges.get("crowd").is_some_and(|e| e.contains("cpu")), "crowd imports cpu: {edges:?}");
    // The CPU and GPU sides stand beside each other: neither imports the other (both build
    // on records, constants and crowd).
    for (a, b) in [("gpu", "cpu"), ("cpu", "gpu")] {
        assert!(!edges.get(a).is_some_and(|e| e.contains(b)), "{a} imports {b}: {edges:?}");
    }
    // Depth-first search for a cycle.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) {
        match state.get(m) {
            Some(2) => return,
            Some(1) => panic!("import cycle: {} -> {m}", path.join(" -> ")),
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, state, path);
        }
        path.pop();
        state.insert(m.to_string(), 2);
    }
    let mut state = BTreeMap::new();
    for m in &modules {
        visit(m, &edges, &mut state, &mut Vec::new());
    }
}
