//! Loaders reject headers whose counts overflow or ask for more data than the file holds,
//! with a `Parse` error (never a panic, never an empty clip or grid loaded "successfully").

use crowd_ik::bvh::Clip;
use crowd_ik::crowd::Heightfield;
use crowd_ik::glam::Vec2;
use crowd_ik::IkError;

fn bvh(frames: &str, values: &str) -> String {
    format!(
        "HIERARCHY\nROOT Hips\n{{\n  OFFSET 0 0 0\n  CHANNELS 3 Xrotation Yrotation Zrotation\n  \
         JOINT Knee\n  {{\n    OFFSET 0 -1 0\n    CHANNELS 3 Xrotation Yrotation Zrotation\n    \
         End Site\n    {{\n      OFFSET 0 -1 0\n    }}\n  }}\n}}\nMOTION\nFrames: {frames}\nFrame Time: 0.0333\n{values}\n"
    )
}

#[test]
fn a_valid_bvh_loads() {
    let clip = Clip::parse(&bvh("2", "0 0 0 0 0 0\n1 2 3 4 5 6")).unwrap();
    assert_eq!(clip.frames(), 2);
}

#[test]
fn bvh_frame_counts_that_overflow_or_exceed_the_data_are_parse_errors() {
    for frames in ["88888888888888888888888881", "18446744073709551615", "3", "-1", "1.5", "nan", "inf"] {
        let result = Clip::parse(&bvh(frames, "0 0 0 0 0 0\n1 2 3 4 5 6"));
        assert!(matches!(result, Err(IkError::Parse(_))), "Frames: {frames}: {result:?}");
    }
}

/// A 2×2 `.npy` file from `Heightfield::to_npy` with its shape text replaced by `shape`
/// (the header's padding absorbs the difference, so its length stays valid).
fn npy(shape: &str) -> Vec<u8> {
    let grid = Heightfield::new(Vec2::ZERO, 1.0, 2, 2, vec![0.0; 4]).unwrap();
    let bytes = grid.to_npy();
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap();
    let header = std::str::from_utf8(&bytes[10..header_end]).unwrap();
    let patched = header.replace("(2, 2)", shape);
    let trimmed = patched.trim_end();
    let padded = format!("{trimmed:<width$}", width = header.len());
    assert_eq!(padded.len(), header.len(), "shape text too long for the header's padding");
    [&bytes[..10], padded.as_bytes(), &bytes[header_end..]].concat()
}

#[test]
fn npy_shapes_that_overflow_or_exceed_the_data_are_parse_errors() {
    assert!(Heightfield::from_npy(&npy("(2, 2)"), Vec2::ZERO, 1.0).is_ok());
    for shape in [
        "(2, 7777777777777777744)",
        "(18446744073709551615, 18446744073709551615)",
        "(4611686018427387904, 4)",
        "(3, 2)",
    ] {
        let result = Heightfield::from_npy(&npy(shape), Vec2::ZERO, 1.0);
        assert!(matches!(result, Err(IkError::Parse(_))), "shape {shape}: {result:?}");
    }
}

#[test]
fn raw_grids_whose_size_overflows_are_parse_errors() {
    let data = [0u8; 16];
    assert!(Heightfield::from_raw_f32(&data, 2, 2, Vec2::ZERO, 1.0).is_ok());
    for (nx, nz) in [(usize::MAX, 2), (1 << 62, 4), (usize::MAX, usize::MAX), (3, 2)] {
        let result = Heightfield::from_raw_f32(&data, nx, nz, Vec2::ZERO, 1.0);
        assert!(matches!(result, Err(IkError::Parse(_))), "{nx}x{nz}: {result:?}");
    }
}

/// The CMU motion-capture skeletons (Debian's assimp-testmodels) are found by name: the same
/// rig as the hand-written mapping of `Hips` and the `Left/Right` `UpLeg, Leg, Foot,
/// ToeBase` joints.
#[test]
fn cmu_rigs_are_found_by_name() {
    use crowd_ik::bvh::BipedSettings;
    use crowd_ik::crowd::FootRig;
    for path in ["/usr/share/assimp/models/BVH/01_01.bvh", "/usr/share/assimp/models/BVH/01_03.bvh"] {
        let Ok(clip) = Clip::load(path) else {
            assert!(std::env::var("CI").map_or(true, |v| v != "true"), "CI=true but {path} is missing");
            eprintln!("SKIPPED: {path} not found (apt-get install assimp-testmodels)");
            continue;
        };
        let scale = 0.0254 / 0.45;
        let found = FootRig::detect_bvh(&clip.skeleton, scale, BipedSettings::default()).unwrap();
        let named = FootRig::biped(
            &clip.skeleton,
            "Hips",
            &[
                ["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"],
                ["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"],
            ],
            scale,
            BipedSettings::default(),
        )
        .unwrap();
        assert_eq!(found, named, "{path}");
    }
}
