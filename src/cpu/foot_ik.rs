//! Crowd foot IK, one character at a time: the CPU twin of `shaders/kernels/foot_ik.wgsl`.
//!
//! Per character (docs/ALGORITHMS.md, "Crowd foot IK"): ground under each FK foot (heightfield or caller hit,
//! inside the step window) → ankle target = hit + normal × foot height → pelvis drop = the
//! largest weighted drop any foot needs, clamped to `[0, max]` (never above FK) → leg IK
//! (two-bone, or pseudo three-bone for quadruped hind legs) with the knee pole from the FK
//! knee → foot aligned to the ground normal within the max foot angle → per-foot weight →
//! the full corrected pose, every joint below the pelvis following it.
//!
//! The ground and foot geometry both this frame and foot placement use are in
//! `foot_ground.rs` (twin: `shaders/shared/foot_ground.wgsl`), the temporal stages (foot
//! placement) in `foot_placement.rs`, the job API ([`FootIkJob`]) in `foot_ik_job.rs`.
//! Imports run one way: this file → `foot_placement` → `foot_ground`.

use glam::{Quat, Vec3};

use super::foot_ground::{
    above, align_foot, ground_height, ground_query, in_world, leg_reach, reach_drop, reference_joint, sole_ends,
    sole_ground, sole_height, sole_target, toe_dir_ms, turned_sole, FeetGround, GroundData, Root,
};
use super::foot_placement::{
    begin_placement, end_placement, locked_sole, locked_turned_sole, place_feet, spring_pelvis, FreeFoot,
};
use super::limb::{solve_limb, solve_three_bone_core};
use super::math::{
    finite4, finite_point, finite_rotation, flush_subnormal, is_unit_quat, nlerp_identity, normalize_or, reject,
};
use crate::constants::{
    KNEE_POLE_DIRECTION, KNEE_POLE_FK_KNEE, MAX_CHARACTER_SCALE, MIN_CHARACTER_SCALE, SOLE_SETTLE_MIN,
};
use crate::crowd::{
    foot, CharacterInput, CharacterState, FootResult, FrameInput, GroundHit, JointPose, SolverRig, MAX_LEGS, NONE,
};
use crate::error::ChainError;
use crate::records::{option, v3, BendMode, LimbSettings, PoleMode};

pub use super::foot_ik_job::FootIkJob;

fn check_character(ch: &CharacterInput, pose: &[JointPose]) -> u32 {
    if !(finite4(ch.root_ws) && finite4(ch.root_rotation) && finite4(ch.foot_weights)) {
        return ChainError::NonFinite.code();
    }
    let s = ch.root_ws[3].abs(); // negative: a mirrored character
    if !((MIN_CHARACTER_SCALE..=MAX_CHARACTER_SCALE).contains(&s) && in_world(ch.root_ws)) {
        return ChainError::InvalidParameter.code();
    }
    if !is_unit_quat(Quat::from_array(ch.root_rotation)) {
        return ChainError::NotNormalized.code();
    }
    for p in pose {
        if !(finite4(p.position_ms) && finite4(p.rotation_ms)) {
            return ChainError::NonFinite.code();
        }
    }
    if !pose.iter().all(|p| in_world(p.position_ms)) {
        return ChainError::OutOfRange.code();
    }
    for p in pose {
        if !is_unit_quat(p.rotation()) {
            return ChainError::NotNormalized.code();
        }
    }
    0
}

/// Solves one character. `table` = [`FootRig::joint_table`](crate::crowd::FootRig::joint_table), `pose_in`/`pose_out` = this
/// character's joints, `hits` = its [`MAX_LEGS`] ground hits (caller-hit mode); `frame` =
/// its foot-placement state and the frame time, when the rig has foot placement.
///
/// The stages, with the same names in `shaders/kernels/foot_ik.wgsl`: [`find_ground`] (ground under
/// each foot, the drop each needs) → [`drop_pelvis`] → [`solve_legs`] (leg IK per leg, with
/// [`align_foot`] for the feet) → [`write_pose`] (the pelvis drops, everything below follows,
/// legs turn) → [`measure_soles`]. With foot placement (`super::foot_placement`):
/// `begin_placement` first, `place_feet` and `spring_pelvis` instead of the stateless
/// targets and [`drop_pelvis`], `end_placement` last.
#[allow(clippy::too_many_arguments)] // mirrors the kernel's bindings
pub(crate) fn foot_ik(
    rig: &SolverRig,
    table: &[u32],
    g: &GroundData,
    ch: &CharacterInput,
    hits: &[GroundHit],
    pose_in: &[JointPose],
    pose_out: &mut [JointPose],
    res: &mut FootResult,
    frame: Option<(&mut CharacterState, &FrameInput)>,
) {
    let n = rig.joint_count() as usize;
    let legs = rig.leg_count() as usize;
    *res = FootResult::default();
    let err = check_character(ch, &pose_in[..n]);
    if err != 0 {
        for (o, i) in pose_out[..n].iter_mut().zip(&pose_in[..n]) {
            *o = JointPose { position_ms: finite_point(i.position_ms), rotation_ms: finite_rotation(i.rotation_ms) };
        }
        for l in 0..legs {
            res.status[l] = err << 8;
        }
        if let Some((state, _)) = frame {
            // Reset when the character is valid again: without `STATE_VALID` its next frame
            // rewrites every value (the kernel clears the flags alone too).
            state.flags = 0;
        }
        return;
    }
    // Subnormal foot weights and event times are 0, as a GPU that flushes subnormals reads
    // them: a foot is then lifted (or its event at the frame's end) on every path.
    let ch = &CharacterInput {
        foot_weights: ch.foot_weights.map(flush_subnormal),
        foot_event_times: ch.foot_event_times.map(flush_subnormal),
        ..*ch
    };
    let root = Root::new(ch);
    let Some((state, time)) = frame else {
        let ground = find_ground(rig, g, hits, ch, &root, pose_in, None, res);
        let drop_ms = drop_pelvis(rig, &root, ground.drop, res);
        let rel = solve_legs(rig, &ch.foot_weights, &root, pose_in, &ground, drop_ms, res);
        write_pose(rig, table, pose_in, pose_out, &rel, drop_ms);
        measure_soles(rig, g, &root, pose_out, &ground, res);
        return;
    };
    let p = begin_placement(rig, &root, state, time);
    let locks = if p.snap { None } else { Some(&*state) };
    let mut ground = find_ground(rig, g, hits, ch, &root, pose_in, locks, res);
    let mut free = [FreeFoot::default(); MAX_LEGS];
    // The character where a root snap left it: its FK feet, hips and the pelvis goal.
    let held = Root { t: root.t + Vec3::Y * p.held, ..root };
    let (goal, cap) = place_feet(rig, g, ch, &held, pose_in, &mut ground, &p, state, &mut free);
    let drop_ms = spring_pelvis(rig, &root, &p, goal, cap, state, res);
    let rel = solve_legs(rig, &[1.0; MAX_LEGS], &root, pose_in, &ground, drop_ms, res);
    write_pose(rig, table, pose_in, pose_out, &rel, drop_ms);
    measure_soles(rig, g, &root, pose_out, &ground, res);
    end_placement(rig, &ground, &p, &free, state, res);
}

/// Ground: the ground under each FK foot inside the step window, the FK sole height above
/// it, and (stateless) the drop each foot needs: down to its target and (two-bone) enough
/// for the target to come within the leg's knee-limited reach, weighted by the foot's
/// weight. With foot placement (`temporal`) the targets are left to `place_feet`. On a
/// heightfield a two-bone foot's normal is [`sole_ground`]'s: the sole's own slope over the
/// ground under it, so it rests on both sides of a crease and on the step over a step edge.
#[allow(clippy::too_many_arguments)] // the kernel's twin takes the same
fn find_ground(
    rig: &SolverRig,
    g: &GroundData,
    hits: &[GroundHit],
    ch: &CharacterInput,
    root: &Root,
    pose_in: &[JointPose],
    temporal: Option<&CharacterState>,
    res: &mut FootResult,
) -> FeetGround {
    let [_, step_up, step_down, _] = rig.params;
    let mut out = FeetGround {
        hit: [false; MAX_LEGS],
        aimed: [false; MAX_LEGS],
        point: [Vec3::ZERO; MAX_LEGS],
        normal: [Vec3::Y; MAX_LEGS],
        target: [Vec3::ZERO; MAX_LEGS],
        turn: [Quat::IDENTITY; MAX_LEGS],
        limited: [false; MAX_LEGS],
        drop: 0.0,
    };
    for l in 0..rig.leg_count() as usize {
        let leg = &rig.legs[l];
        let three = leg.is_three_bone();
        let ref_ws = root.to_world(pose_in[reference_joint(leg)].position());
        let h = leg.foot_height();
        let Some((gp, mut gn)) = ground_query(rig, g, hits, l, ref_ws.x, ref_ws.z) else { continue };
        // A heightfield has no overhangs: ground above the step-up window means the foot is
        // inside the terrain (flagged). It stands on that ground where the hip is above it;
        // ground above the hip is a wall, and the foot keeps its FK pose.
        let under = !(gp.y <= ref_ws.y + step_up) && rig.ground_mode() == 0;
        if under {
            res.status[l] |= foot::UNDER_GROUND;
            if !(gp.y < root.to_world(pose_in[leg.hip() as usize].position()).y) {
                continue;
            }
        }
        if !((under || gp.y <= ref_ws.y + step_up) && gp.y >= ref_ws.y - step_down) {
            continue;
        }
        out.hit[l] = true;
        res.status[l] |= foot::HIT;
        let (ankle, toe) = (pose_in[leg.ankle() as usize], pose_in[leg.toe() as usize]);
        let up_ms = ankle.rotation() * v3(leg.foot_up);
        let toe_dir_ms = toe_dir_ms(leg, toe.rotation());
        let toe_ws = root.to_world(toe.position());
        let sole = (h, leg.sole_reach(), root.dir_to_world(toe_dir_ms));
        if rig.ground_mode() == 0 && !three {
            // The heel and tip (and the sole between them) sampled once for both the FK
            // sole height and the normal the foot aligns to (`sole_ground`).
            let up = root.dir_to_world(up_ms);
            let s = sole_ends(ref_ws, toe_ws - ref_ws, up, h, sole.1, sole.2);
            // A locked foot's sole measured where the lock holds it (its place and heading;
            // one `sole_ground` either way, as the kernel's lanes run one call), and so its
            // FK sole height over the ground there.
            let held = temporal.and_then(|st| locked_sole(st, l, leg, &s, ref_ws, toe_ws));
            let at = held.unwrap_or(s);
            let (gap, normal) = sole_ground(rig, g, gp, gn, at.heel, at.tip);
            res.sole_before[l] = if at.tip != at.ball { gap.min(above(rig, g, gp, gn, at.ball)) } else { gap };
            // Measured again where the foot will stand: turned to that normal (as
            // `align_foot` turns it) about its ankle, the ankle over the ground point along
            // the normal (or where the lock holds it, spun about the normal to the locked
            // heading as the lock will hold it). A turned foot's heel and ball move
            // across the ground by centimetres, and across a crease the chord between them
            // turns with where they are (a ball-pivot foot keeps the first normal, and so does
            // a foot the turn moves by less than `SOLE_SETTLE_MIN`: flat ground).
            let mut settled = normal;
            if !leg.pivots_on_ball() && rig.sole_once() == 0 {
                let (turn, _) =
                    align_foot(leg, ankle.rotation(), root.dir_to_model(normal).normalize(), root.model_up());
                let anchor = if held.is_some() { ref_ws } else { gp + normal * h };
                let toe_off = toe.position() - ankle.position();
                let turned = turned_sole(root, anchor, turn, up_ms, toe_off, (h, sole.1, toe_dir_ms));
                let turned = match (held, temporal) {
                    (Some(_), Some(st)) => {
                        let toe_off_ws = root.dir_to_world(turn * toe_off);
                        locked_turned_sole(st, (l, leg), &turned, ref_ws, toe_off_ws, normal).unwrap_or(turned)
                    }
                    _ => turned,
                };
                let moved = |a: Vec3, b: Vec3| (a.x - b.x).abs().max((a.z - b.z).abs());
                // Blended in over a move of one to two `SOLE_SETTLE_MIN`, so the normal
                // changes continuously with where the foot stands (both twins agree where
                // they round the move differently).
                let m = moved(turned.heel, at.heel).max(moved(turned.tip, at.tip));
                let s = ((m - SOLE_SETTLE_MIN) / SOLE_SETTLE_MIN).min(1.0);
                if s > 0.0 {
                    let again = sole_ground(rig, g, gp, gn, turned.heel, turned.tip).1;
                    settled = if s < 1.0 { (normal + (again - normal) * s).normalize() } else { again };
                }
            }
            gn = settled;
        } else {
            res.sole_before[l] = if three {
                let sole = ref_ws - Vec3::Y * h;
                sole.y - ground_height(rig, g, gp, gn, sole.x, sole.z)
            } else {
                sole_height(rig, g, gp, gn, ref_ws, toe_ws, root.dir_to_world(up_ms), sole)
            };
        }
        out.point[l] = gp;
        out.normal[l] = gn;
        if temporal.is_some() {
            continue;
        }
        // A lifted foot (weight ≤ 0) keeps its FK pose and asks nothing of the pelvis: no
        // target to place.
        let w = ch.foot_weights[l];
        if !(w > 0.0) {
            continue;
        }
        out.aimed[l] = true;
        let mut target_ws = gp + gn * h;
        if !three {
            // The whole sole on the ground: the foot turned as `align_foot` turns it to
            // the sole's normal, its sole measured against the ground under it, and the
            // ankle target moved up or down so the lowest point touches it. On a plane or
            // across a crease heel and ball then both touch; an angle-limited foot cannot lie
            // flat, so one end lifts (the least the limit allows) instead of the other
            // sinking in.
            let (turn, limited) = align_foot(leg, ankle.rotation(), root.dir_to_model(gn).normalize(), root.model_up());
            (out.turn[l], out.limited[l]) = (turn, limited);
            let toe_off = toe.position() - ankle.position();
            target_ws = sole_target(rig, g, root, gp, gn, turn, up_ms, toe_off, (h, leg.sole_reach(), toe_dir_ms));
        }
        out.target[l] = target_ws;
        let mut need = ref_ws.y - target_ws.y;
        if !three {
            let hip_ws = root.to_world(pose_in[leg.hip() as usize].position());
            need = need.max(reach_drop(leg_reach(pose_in, leg, root.s), hip_ws, target_ws));
        }
        out.drop = out.drop.max(need * w.min(1.0));
    }
    out
}

/// Pelvis: the drop clamped to `[0, max]` (never above FK), as a model-space offset.
fn drop_pelvis(rig: &SolverRig, root: &Root, drop: f32, res: &mut FootResult) -> Vec3 {
    let drop = drop.clamp(0.0, rig.max_pelvis_drop());
    res.pelvis[0] = drop;
    root.dir_to_model(Vec3::new(0.0, -drop, 0.0)) / root.s
}

/// Legs: per leg with ground and weight, the leg IK (two-bone with its foot aligned, or
/// pseudo three-bone) toward the ankle target, the knee pole from the rig's rule; returns
/// the weighted relative deltas of hip, knee and ankle per leg.
#[allow(clippy::needless_range_loop)] // one index over every per-leg array, as in the kernel
fn solve_legs(
    rig: &SolverRig,
    weights: &[f32; MAX_LEGS],
    root: &Root,
    pose_in: &[JointPose],
    ground: &FeetGround,
    drop_ms: Vec3,
    res: &mut FootResult,
) -> [[Quat; 3]; MAX_LEGS] {
    let mut rel = [[Quat::IDENTITY; 3]; MAX_LEGS];
    for l in 0..rig.leg_count() as usize {
        let w = weights[l];
        if !ground.aimed[l] {
            continue;
        }
        let leg = &rig.legs[l];
        let three = leg.is_three_bone();
        let jp = |k: usize| pose_in[leg.joints[k] as usize].position() + drop_ms;
        let jr = |k: usize| pose_in[leg.joints[k] as usize].rotation();
        let (p0, p1, p2, p3) = (jp(0), jp(1), jp(2), jp(3));
        let target_ms = root.to_model(ground.target[l]);
        // Knee pole: toward the FK knee (a straight FK leg keeps its FK plane, hinge-defined),
        // the FK plane, or a fixed model-space direction.
        let knee_dir = reject(p1 - p0, normalize_or(p2 - p0, Vec3::Y, 0.0));
        let (pole_mode, pole) = match leg.pole_rule() {
            KNEE_POLE_FK_KNEE if knee_dir.length_squared() > 1e-6 * (p1 - p0).length_squared() => {
                (PoleMode::Direction, knee_dir)
            }
            KNEE_POLE_DIRECTION => (PoleMode::Direction, v3(leg.pole)),
            _ => (PoleMode::FkPlane, Vec3::ZERO),
        };
        let limb = LimbSettings {
            target_ms: target_ms.extend(w).to_array(),
            pole_ms: pole.extend(0.0).to_array(),
            mid_axis: [leg.knee_axis[0], leg.knee_axis[1], leg.knee_axis[2], 0.0],
            params: [1.0, 1.0, leg.cos_min(), leg.cos_max()],
            mode: [pole_mode as u32, BendMode::Hinge as u32, leg.options() & option::KNEE_LIMITS, 0],
        };
        let solved = if three {
            solve_three_bone_core(
                [p0, p1, p2, p3],
                [jr(0), jr(1), jr(2), jr(3)],
                target_ms,
                leg.blend_ratio(),
                false,
                &limb,
            )
            .map(|sol| (sol.e, sol.reached, sol.info))
        } else {
            solve_limb(p0, p1, p2, jr(1), target_ms, &limb).map(|sol| {
                if ground.limited[l] {
                    res.status[l] |= foot::ANGLE_LIMITED;
                }
                let d1 = sol.e0 * sol.e1;
                ([sol.e0, sol.e1, d1.conjugate() * ground.turn[l]], sol.reached, sol.info)
            })
        };
        match solved {
            Ok((e, reached, info)) => {
                for k in 0..3 {
                    rel[l][k] = nlerp_identity(e[k], w);
                }
                res.status[l] |= foot::SOLVED;
                if reached && w >= 1.0 {
                    res.status[l] |= foot::REACHED;
                }
                if info & crate::records::info::KNEE_LIMITED != 0 {
                    res.status[l] |= foot::KNEE_LIMITED;
                }
                if info & crate::records::info::AGAINST_HINGE != 0 {
                    res.status[l] |= foot::AGAINST_HINGE;
                }
            }
            Err(e) => {
                res.status[l] = (res.status[l] & !foot::ANGLE_LIMITED) | (e.code() << 8);
            }
        }
    }
    rel
}

/// Pose: the corrected pose, parents first: the pelvis drops, everything below follows,
/// leg joints turn by their deltas.
fn write_pose(
    rig: &SolverRig,
    table: &[u32],
    pose_in: &[JointPose],
    pose_out: &mut [JointPose],
    rel: &[[Quat; 3]; MAX_LEGS],
    drop_ms: Vec3,
) {
    let n = rig.joint_count() as usize;
    let pelvis = rig.pelvis() as usize;
    for j in 0..n {
        let fk = pose_in[j];
        let parent = table[j];
        let role = table[n + j];
        let e = if role == NONE { Quat::IDENTITY } else { rel[(role / 4) as usize][(role % 4) as usize] };
        let (pos, delta) = if j == pelvis {
            (fk.position() + drop_ms, e)
        } else if parent == NONE {
            (fk.position(), e)
        } else {
            let p = parent as usize;
            let dp = pose_out[p].rotation() * pose_in[p].rotation().conjugate();
            (pose_out[p].position() + dp * (fk.position() - pose_in[p].position()), dp * e)
        };
        pose_out[j] = JointPose::new(pos, (delta * fk.rotation()).normalize());
    }
}

/// The sole height above the ground after IK, per leg with ground.
fn measure_soles(
    rig: &SolverRig,
    g: &GroundData,
    root: &Root,
    pose_out: &[JointPose],
    ground: &FeetGround,
    res: &mut FootResult,
) {
    for l in 0..rig.leg_count() as usize {
        if !ground.hit[l] {
            continue;
        }
        let leg = &rig.legs[l];
        let three = leg.is_three_bone();
        let ref_ws = root.to_world(pose_out[reference_joint(leg)].position());
        let (point, normal, h) = (ground.point[l], ground.normal[l], leg.foot_height());
        res.sole_after[l] = if three {
            let sole = ref_ws - Vec3::Y * h;
            sole.y - ground_height(rig, g, point, normal, sole.x, sole.z)
        } else {
            let up = root.dir_to_world(pose_out[leg.ankle() as usize].rotation() * v3(leg.foot_up));
            let toe = pose_out[leg.toe() as usize];
            let toe_dir = root.dir_to_world(toe_dir_ms(leg, toe.rotation()));
            // Heel, ball and tip: the report, not the solve (which keeps every point of the
            // sole on or above the ground).
            let s = sole_ends(ref_ws, root.to_world(toe.position()) - ref_ws, up, h, leg.sole_reach(), toe_dir);
            let at = |p: Vec3| above(rig, g, point, normal, p);
            at(s.heel).min(at(s.ball)).min(at(s.tip))
        };
    }
}
