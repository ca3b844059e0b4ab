//! # crowd-ik-tools
//!
//! What the examples, benchmarks and tests of `crowd-ik` share, kept out of the IK library
//! so its public surface is the IK alone:
//!
//! | module | what |
//! | --- | --- |
//! | [`scene`] | a procedural biped, its foot-IK rig, a walk cycle, a crowd wandering over hills |
//! | [`terrain`] | procedural rolling hills, stairs and a Terragen terrain loader as [`crowd_ik::crowd::Heightfield`]s |
//! | [`workload`] | deterministic random chains for benchmarks and tests |
//! | [`limits`] | an independent statement of joint limits, to check solved chains against |
//! | [`hostile`] | the properties a foot-placement frame keeps on any input (fuzzing, property tests) |
//! | [`preview`] | a headless wgpu renderer of a terrain and a skinned crowd (works on lavapipe) |
//! | [`image`] | PNG output (the `png` crate) |
//! | [`quiet_headless_gpu`] | a private runtime dir for Mesa on a headless machine |

#![warn(missing_docs)]

pub mod character;
pub mod hostile;
pub mod image;
pub mod limits;
pub mod preview;
pub mod scene;
pub mod terrain;
pub mod workload;

/// Mesa's Vulkan drivers (lavapipe included) print `error: XDG_RUNTIME_DIR is invalid or not
/// set in the environment` on a headless machine whose session has none. Call this first
/// thing in `main`, before any thread starts and any GPU instance exists: without a runtime
/// dir it gives the process a private one (`crowd-ik-runtime-<user>` under the temp dir,
/// mode 0700), so the examples print nothing alarming. A runtime dir already set is kept.
pub fn quiet_headless_gpu() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_some() {
        return;
    }
    let user = std::env::var("USER").or_else(|_| std::env::var("LOGNAME"));
    let who = user.unwrap_or_else(|_| std::process::id().to_string());
    let dir = std::env::temp_dir().join(format!("crowd-ik-runtime-{who}"));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    }
    // Single-threaded here (the caller's promise): nothing reads the environment meanwhile.
    std::env::set_var("XDG_RUNTIME_DIR", &dir);
}
