//! Foot placement across frames, the temporal stages of crowd foot IK: the CPU twin of
//! `shaders/shared/foot_placement.wgsl` (same stage names), called by [`super::foot_ik`] when the
//! rig has placement settings.
//!
//! Per character and frame (docs/ALGORITHMS.md, "Foot placement across frames"):
//! [`begin_placement`] (reset or not, the root snap held) → `find_ground` (raw
//! ground under each foot, the sole's own normal) → [`place_feet`], per leg:
//! `weigh_foot` (the weight blended over time, a 0/1 flip placed inside the frame) →
//! `detect_plant` → `ground_target` (ground plane smoothed by springs, never more than the
//! tolerance below the real ground; the weight's blend from the swing target) →
//! `lock_foot` (locks held or blended back) → `lift_foot` (nothing below the ground; the
//! swing look-ahead; a lock settling) → [`spring_pelvis`] → leg IK → [`end_placement`] (a
//! locked leg stretched past its reach is released; the state's flags).
//!
//! It builds on the ground and foot geometry of `foot_ground.rs`, as the stateless frame
//! does; the frame (`foot_ik.rs`) calls it, never the other way.

use glam::{Quat, Vec2, Vec3, Vec4};

use super::foot_ground::{
    above, align_foot, align_up, ground_height, keeps_roll, leg_reach, plane_sole_gap, reach_drop, reference_joint,
    sole_ends, sole_height, sole_target, toe_dir_ms, toe_dir_ws, turned_sole, FeetGround, GroundData, Root, Sole,
};
use super::math::{atan2, nlerp_identity, normalize_or, quat_from_axis_cos_sin, sin_cos};
use crate::constants::{
    CROSSING_STEPS, MAX_FRAME_TIME, MAX_GOAL_SPEED, MAX_STATE_HEADING, MAX_STATE_MAGNITUDE, PLANT_SPEED, PLANT_WEIGHTS,
    SOLE_PIVOT_MARGIN, STATE_HEEL_SHIFT, STATE_LOCKED_SHIFT, STATE_MOTION_SHIFT, STATE_PLANTED_SHIFT,
    STATE_RELEASED_SHIFT, STATE_VALID,
};
use crate::crowd::{
    foot, spring_rate, CharacterInput, CharacterState, FootResult, FrameInput, JointPose, LegState, SolverLeg,
    SolverRig, MAX_LEGS,
};
use crate::records::v3;

/// A critically damped spring's rate `y` and its decay over the frame `e = e^{−y·dt}`
/// (computed once per frame: [`FrameInput`]), and the frame time.
#[derive(Clone, Copy)]
pub(crate) struct Decay {
    pub y: f32,
    pub e: f32,
    pub dt: f32,
}

/// A critically damped spring, exact for any `dt` toward a goal that moves linearly over
/// the frame from `from` to `goal` (so frame rates agree on goals that change smoothly):
/// returns the new value and velocity. Rate 0 (half-life ≤ 0): at the goal at once.
#[must_use]
pub(crate) fn spring(x: f32, v: f32, from: f32, goal: f32, k: Decay) -> (f32, f32) {
    if !(k.y > 0.0) {
        return (goal, 0.0);
    }
    if !(k.dt > 0.0) {
        return (x, v);
    }
    // A goal that moves faster than MAX_GOAL_SPEED jumped (a teleport, a garbage value):
    // followed as a step to where it is now.
    let mut gv = (goal - from) / k.dt;
    let mut from = from;
    if !(gv.abs() <= MAX_GOAL_SPEED) {
        (from, gv) = (goal, 0.0);
    }
    // Relative to the moving goal the spring settles at `lag`; the rest decays.
    let lag = -2.0 * gv / k.y;
    let j0 = x - from - lag;
    let j1 = (v - gv) + j0 * k.y;
    (goal + lag + k.e * (j0 + j1 * k.dt), gv + k.e * (v - gv - j1 * k.y * k.dt))
}

/// [`spring`] on each coordinate.
fn spring3(x: Vec3, v: Vec3, from: Vec3, goal: Vec3, k: Decay) -> (Vec3, Vec3) {
    let (x0, v0) = spring(x.x, v.x, from.x, goal.x, k);
    let (x1, v1) = spring(x.y, v.y, from.y, goal.y, k);
    let (x2, v2) = spring(x.z, v.z, from.z, goal.z, k);
    (Vec3::new(x0, x1, x2), Vec3::new(v0, v1, v2))
}

/// `w` after `dt` seconds moving toward a goal at most `rate` per second, the goal moving
/// linearly from `from` to `goal` over the frame (exact for such a goal, so frame rates
/// agree).
fn follow(w: f32, from: f32, goal: f32, rate: f32, dt: f32) -> f32 {
    if !(dt > 0.0) {
        return w;
    }
    let gv = (goal - from) / dt;
    let toward = if from > w { rate } else { -rate };
    // Meets the goal at t = (from − w) / (toward − gv), if that is within the frame.
    let closing = toward - gv;
    let t = if from == w {
        0.0
    } else if closing * (from - w) > 0.0 {
        (from - w) / closing
    } else {
        f32::INFINITY
    };
    if !(t < dt) {
        return w + toward * dt;
    }
    // Then it moves with the goal, or as fast as it may behind it.
    let met = from + gv * t;
    if gv.abs() <= rate {
        goal
    } else {
        met + gv.signum() * rate * (dt - t)
    }
}

/// A foot weight `w` after a frame of `dt` seconds blending at most `rate` per second
/// toward an input that went from `from` to `goal`. An input that moved no faster than the
/// blend is taken as moving linearly over the frame ([`follow`], exact for a ramp). One that
/// moved faster changed at a moment inside the frame that a sampled input does not tell (a
/// 0/1 animation event): taken as a ramp centred in the frame, shorter the farther it went
/// (`rate · dt / |goal − from|` of the frame), so a step counts from the middle of its
/// frame at every frame rate, and the two readings meet where the input moves at the rate.
/// Where the caller told when the input took its value (`event` seconds before the frame's
/// end, within `[0, dt]`), it stepped then.
fn blend_weight(w: f32, from: f32, goal: f32, rate: f32, dt: f32, event: f32) -> f32 {
    if event >= 0.0 && event <= dt && goal != from {
        let w = follow(w, from, from, rate, dt - event);
        return follow(w, goal, goal, rate, event);
    }
    let jump = (goal - from).abs();
    if !(jump > rate * dt) {
        return follow(w, from, goal, rate, dt);
    }
    let ramp = dt * (rate * dt / jump);
    let before = 0.5 * (dt - ramp);
    let w = follow(w, from, from, rate, before);
    let w = follow(w, from, goal, rate, ramp);
    follow(w, goal, goal, rate, dt - before - ramp)
}

/// Leg `l`'s foot weight blended over this frame (linear, `weight_blend_time` from 0 to 1;
/// [`blend_weight`]) and when its input took its value, as
/// seconds before the frame's end (negative: not known); the range of contact heights its
/// flips crossed (`LegState::free_heading[3]`, `LegState::motion[3]`) updated. `now` and
/// `last` = the FK contact point's height above the (held) root this frame and last.
///
/// A weight that flips between 0 and 1 (an animation's contact event, sampled) changed at
/// a moment the sample does not tell. The caller's event time says it where given. Else:
/// contact events are mostly taken where the foot comes within some height of the floor,
/// so the flip's frame tells that the contact point crossed that height between its height
/// last frame and now (downward to land, upward to lift). The flips seen so far narrow that
/// height to a range (the intersection of theirs); the flip is placed where the contact
/// point, moving linearly over the frame, crossed the middle of the range. A flip that does
/// not fit (the range would be empty) starts the range anew from its own frame (its middle
/// height: the frame's middle); one where the point moved the other way, or by no more than
/// `eps` (the rounding of the world heights the two come from), is left to the frame's
/// middle.
fn weigh_foot(
    rig: &SolverRig,
    ls: &mut LegState,
    ch: &CharacterInput,
    l: usize,
    (now, last, eps): (f32, f32, f32),
    snap: bool,
    dt: f32,
) -> (f32, f32) {
    let goal = ch.foot_weights[l].clamp(0.0, 1.0);
    if snap {
        (ls.free_heading[3], ls.motion[3]) = (0.0, -1.0);
        return (goal, -1.0);
    }
    let from = ls.heading[3];
    let told = ch.foot_event_times[l];
    let mut event = if told >= 0.0 && told <= dt { told } else { -1.0 };
    let (mut lo, mut hi) = (ls.free_heading[3], ls.motion[3]);
    let flip = (from <= 0.0 && goal >= 1.0) || (from >= 1.0 && goal <= 0.0);
    // Landing the contact came down across the height, lifting it rose across it.
    let (a, b) = if goal >= 1.0 { (now, last) } else { (last, now) };
    // (Within `eps` a range that ends where the next begins still fits: no rounding
    // decides.)
    if flip && b - a > eps {
        let known = lo <= hi;
        (lo, hi) = (lo.max(a), hi.min(b));
        if !(known && lo <= hi + eps) {
            (lo, hi) = (a, b);
        }
        if event < 0.0 {
            event = crossed(last, now, 0.5 * (lo + hi), dt);
        }
    }
    (ls.free_heading[3], ls.motion[3]) = (lo, hi);
    let blend_time = rig.weight_blend_time();
    if !(blend_time > 0.0) {
        return (goal, event);
    }
    let w = blend_weight(ls.fk[3].clamp(0.0, 1.0), from.clamp(0.0, 1.0), goal, 1.0 / blend_time, dt, event);
    (w.clamp(0.0, 1.0), event)
}

/// When leg `l`'s weight took its value this frame, as seconds before the frame's end:
/// `event` where known (from [`weigh_foot`]), else the frame's middle.
fn event_or_middle(event: f32, dt: f32) -> f32 {
    if event >= 0.0 {
        event
    } else {
        0.5 * dt
    }
}

/// How much of a frame's motion of a point happened in its last `since` seconds (of `dt`),
/// the point moving at `speed` on average over the frame and at `before` (negative:
/// unknown) over the frame before: its speed taken as changing linearly across the two
/// frames (a toe off accelerating, a landing slowing down), within what keeps it forward.
/// In `[0, 1]`, rising with `since`; 0 without an event.
fn back_fraction(since: f32, dt: f32, speed: f32, before: f32) -> f32 {
    if !(since > 0.0 && dt > 0.0) {
        return 0.0;
    }
    let r = (since / dt).min(1.0);
    // The change of speed over the frame against the frame's speed: within ±2 the point's
    // speed keeps its sign across the frame.
    let k = if before >= 0.0 && speed > 0.0 { ((speed - before) / speed).clamp(-2.0, 2.0) } else { 0.0 };
    r + 0.5 * k * r * (1.0 - r)
}

/// What is left of a release offset `t` seconds after the release: smoothstep from 1 at 0
/// to 0 at `time` (0 when `time` ≤ 0), in `[0, 1]` for any `t`.
fn remaining(t: f32, time: f32) -> f32 {
    if !(time > 0.0) || t >= time {
        return 0.0;
    }
    // Never below 0: a garbled state's negative time must not scale the offset past 1.
    let x = (t / time).max(0.0);
    1.0 - x * x * (3.0 - 2.0 * x)
}

/// The heading of a world direction: its `x, z` normalised, zero when it is vertical.
fn heading(f: Vec3) -> [f32; 2] {
    let len2 = f.x * f.x + f.z * f.z;
    if len2 > 1e-12 {
        let r = 1.0 / len2.sqrt();
        [f.x * r, f.z * r]
    } else {
        [0.0, 0.0]
    }
}

/// Cosine and sine of the turn about world up from heading `a` to heading `b`.
fn turn_between(a: [f32; 2], b: [f32; 2]) -> [f32; 2] {
    [a[0] * b[0] + a[1] * b[1], a[1] * b[0] - a[0] * b[1]]
}

/// Heading `a` turned by `(c, s)`.
fn turn_heading(a: [f32; 2], r: [f32; 2]) -> [f32; 2] {
    [a[0] * r[0] + a[1] * r[1], a[1] * r[0] - a[0] * r[1]]
}

/// A heading offset of `angle` radians blended toward none by `k` ∈ [0, 1] (1 = all of
/// it): cosine and sine of `angle · k` (the angle fades, so even a half-turn offset turns
/// back smoothly, one way).
fn fade_turn(angle: f32, k: f32) -> [f32; 2] {
    let (s, c) = sin_cos(angle * k);
    [c, s]
}

/// Whether the state is one the crate could have written, for the rig's `legs` legs (the
/// other slots are never read): no flag bit but `STATE_VALID` and the rig's legs' lock,
/// plant and release bits; the sum of the magnitudes of its values within `MAX_STATE_MAGNITUDE` (NaN
/// or inf anywhere makes the sum NaN or inf; so does a state so large that it overflows);
/// every heading word within `MAX_STATE_HEADING`. The GPU twin sums the same way, one add
/// per value instead of a test per value.
fn state_in_range(s: &CharacterState, legs: usize) -> bool {
    let v = |a: [f32; 4]| Vec4::from_array(a).abs();
    let head = v(s.pelvis) + Vec4::new(s.root[0], s.root[1], s.root_velocity, 0.0).abs();
    let (sum, heading) = s.legs[..legs].iter().fold((head, 0.0f32), |(sum, heading), l| {
        let leg = v(l.plane)
            + v(l.plane_velocity)
            + v(l.plane_goal)
            + v(l.lock)
            + v(l.fk)
            + v(l.heading)
            + v(l.motion)
            + v(l.free)
            + v(l.free_heading);
        (sum + leg + v(l.lift), heading.max(l.heading[0].abs().max(l.heading[1].abs())))
    });
    let total = (sum.x + sum.y) + (sum.z + sum.w);
    let mask = (1u32 << legs) - 1;
    let known = STATE_VALID
        | (mask << STATE_LOCKED_SHIFT)
        | (mask << STATE_PLANTED_SHIFT)
        | (mask << STATE_RELEASED_SHIFT)
        | (mask << STATE_HEEL_SHIFT)
        | (mask << STATE_MOTION_SHIFT);
    s.flags & !known == 0 && total <= MAX_STATE_MAGNITUDE && heading <= MAX_STATE_HEADING
}

fn bit(shift: u32, l: usize) -> u32 {
    1 << (shift + l as u32)
}

/// The point of sole `s` a sole pivot holds (`LockPivot::Sole`): its heel or its ball, as
/// the state says; `None` for the other pivots.
fn sole_pivot(st: &CharacterState, l: usize, leg: &SolverLeg, s: &Sole) -> Option<Vec3> {
    if !leg.pivots_on_sole() {
        return None;
    }
    Some(if st.flags & bit(STATE_HEEL_SHIFT, l) != 0 { s.heel } else { s.ball })
}

/// Cosine and sine of the turn from heading `from` to the heading leg `l`'s lock holds
/// (none where either has no horizontal length); `None` when the leg is not locked.
fn turn_to_lock(st: &CharacterState, l: usize, from: [f32; 2]) -> Option<[f32; 2]> {
    if st.flags & bit(STATE_LOCKED_SHIFT, l) == 0 {
        return None;
    }
    let locked = [st.legs[l].heading[0], st.legs[l].heading[1]];
    let held = locked[0] * locked[0] + locked[1] * locked[1] > 1e-12;
    Some(if from != [0.0, 0.0] && held { turn_between(from, locked) } else { [1.0, 0.0] })
}

/// Where a foot locked in `st` stands, for the frame's ground measure (`find_ground`): its
/// FK sole `s` (ends from the reference joint `ref_ws`, world) turned about the vertical
/// through its contact point (the ankle, the ball for a ball pivot, the heel or the ball of
/// `s` for a sole pivot) from the FK heading
/// to the locked heading, and carried to the locked point. `None` when it is not locked.
pub(crate) fn locked_sole(
    st: &CharacterState,
    l: usize,
    leg: &SolverLeg,
    s: &Sole,
    ref_ws: Vec3,
    toe_ws: Vec3,
) -> Option<Sole> {
    let r = turn_to_lock(st, l, heading(toe_ws - ref_ws))?;
    let contact = if leg.pivots_on_ball() { toe_ws } else { sole_pivot(st, l, leg, s).unwrap_or(ref_ws) };
    let lock = Vec3::new(st.legs[l].lock[0], contact.y, st.legs[l].lock[2]);
    let place = |p: Vec3| {
        let d = p - contact;
        let [x, z] = turn_heading([d.x, d.z], r);
        lock + Vec3::new(x, d.y, z)
    };
    Some(Sole { heel: place(s.heel), ball: place(s.ball), tip: place(s.tip) })
}

/// Where a foot locked in `st` stands once turned to the ground (its sole `s` turned about
/// its ankle `ankle_ws`, world), for the second ground measure (`find_ground`): spun about
/// the ground normal `up` through the ankle from its own heading (that of `toe_off_ws`, the
/// turned toe offset) to the locked heading and carried to the locked point, as
/// [`lock_foot`] places it. (Spun about the vertical from the FK heading, as [`locked_sole`]
/// measures the animated foot, its heading is off by up to a degree or two on steep
/// ground, and across a crease the chord between heel and ball with it.) A sole pivot
/// ([`sole_pivot`]) is carried to the lock, spun about it, in place of the ankle. `None`
/// when it is not locked. Not for ball-pivot feet (they keep the first measure).
pub(crate) fn locked_turned_sole(
    st: &CharacterState,
    (l, leg): (usize, &SolverLeg),
    s: &Sole,
    ankle_ws: Vec3,
    toe_off_ws: Vec3,
    up: Vec3,
) -> Option<Sole> {
    let r = turn_to_lock(st, l, heading(toe_off_ws))?;
    let spin = quat_from_axis_cos_sin(up, r[0], r[1]);
    let contact = sole_pivot(st, l, leg, s).unwrap_or(ankle_ws);
    let lock = Vec3::new(st.legs[l].lock[0], contact.y, st.legs[l].lock[2]);
    let place = |p: Vec3| lock + spin * (p - contact);
    Some(Sole { heel: place(s.heel), ball: place(s.ball), tip: place(s.tip) })
}

/// This frame's temporal inputs for the stages after [`begin_placement`].
pub(crate) struct Placement {
    /// The state is reset to this frame's solve (spawn, explicit reset, a hitch, a
    /// non-finite state).
    pub snap: bool,
    /// Seconds since the last frame.
    pub dt: f32,
    /// The pelvis and ground springs over this frame.
    pub pelvis: Decay,
    pub ground: Decay,
    /// The plant-speed filter's decay over this frame.
    pub plant_decay: f32,
    /// The root snap still held (world up) and its velocity: the character is drawn this
    /// far from where its root put it.
    pub held: f32,
    pub held_velocity: f32,
    /// Last frame's pelvis offset with this frame's snap held: where the speed limit starts.
    pub start: f32,
    /// The root snap taken this frame (world up; 0 = none) and the root's continuous
    /// vertical velocity (the state's next `root_velocity`).
    pub jump: f32,
    pub root_velocity: f32,
    /// How far the held snap moved the character this frame (its decay, world up): motion
    /// the animation did not make, left out of the plant detection's foot speed.
    pub settle: f32,
}

/// Per leg, what [`place_feet`] leaves for [`end_placement`].
#[derive(Clone, Copy, Default)]
pub(crate) struct FreeFoot {
    /// Where the unlocked solve puts the contact point (world).
    contact: Vec3,
    /// Its heading.
    heading: [f32; 2],
    /// The hip (world, the character where a root snap left it) the pelvis goal was
    /// measured from, and the leg's reach ([`leg_reach`]), for [`end_placement`]'s check.
    hip: Vec3,
    reach: f32,
}

/// Begin: whether the state resets this frame, and the root snap held: a root whose vertical
/// velocity changed by more than `root_snap_speed` this frame snapped, and the character
/// stays where its continuous motion would have put it, the jump then decaying by the
/// pelvis spring (within `[−max drop, max rise]`). A slope's climb changes the root's speed
/// gradually, so it passes through however fast.
pub(crate) fn begin_placement(rig: &SolverRig, root: &Root, state: &CharacterState, frame: &FrameInput) -> Placement {
    let dt = frame.dt;
    let pelvis = Decay { y: spring_rate(rig.pelvis_half_life()), e: frame.pelvis_decay, dt };
    let ground = Decay { y: spring_rate(rig.ground_half_life()), e: frame.ground_decay, dt };
    let legs = rig.leg_count() as usize;
    let snap = state.flags & STATE_VALID == 0 || !state_in_range(state, legs) || !(dt <= MAX_FRAME_TIME);
    let (mut held, mut held_velocity, mut start, mut jump, mut root_velocity, mut settle) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    if !snap {
        held = state.pelvis[2];
        root_velocity = state.root_velocity;
        // Beyond where last frame's vertical velocity carries the root (with dt = 0, any
        // move is a jump). The velocity carried is the root's, within 0.9 of the snap speed
        // (a frame later, a root that stops passes: no velocity sticks; a steady climb up to
        // 1.9 times the snap speed passes at once).
        let snap_speed = rig.root_snap_speed();
        let moved = root.t.y - state.root[0];
        let beyond = moved - root_velocity * dt;
        if beyond.abs() > snap_speed * dt {
            jump = beyond;
            held -= beyond;
        }
        if dt > 0.0 {
            root_velocity = (moved / dt).max(-0.9 * snap_speed).min(0.9 * snap_speed);
        }
        start = state.pelvis[0] + held;
        let before = held;
        (held, held_velocity) = spring(held, state.pelvis[3], 0.0, 0.0, pelvis);
        held = held.max(-rig.max_pelvis_drop()).min(rig.pelvis_max_rise());
        settle = held - before;
    }
    Placement {
        snap,
        dt,
        pelvis,
        ground,
        plant_decay: frame.plant_decay,
        held,
        held_velocity,
        start,
        jump,
        root_velocity,
        settle,
    }
}

/// One leg's FK inputs to this frame's placement stages.
#[derive(Clone, Copy)]
struct LegFrame<'a> {
    l: usize,
    leg: &'a SolverLeg,
    three: bool,
    ball_pivot: bool,
    /// Foot height.
    h: f32,
    /// The blended foot weight, and when the input weight took its value this frame
    /// (seconds before the frame's end; negative: not known).
    w: f32,
    event: f32,
    ankle: JointPose,
    /// The toe from the ankle (model space).
    toe_off: Vec3,
    /// The toe's direction past the ball (model space, FK; zero: straight on with the
    /// foot).
    toe_dir: Vec3,
    /// The reference joint (ankle, or a hoof's tip) and the contact point (the ball for a
    /// ball pivot), world, where the FK pose puts them.
    ref_fk: Vec3,
    contact_fk: Vec3,
}

/// Where a foot is aimed: its target (world), its turn (model space), the ground normal
/// it stands on (world) and how far the ground spring holds the target above the real
/// ground (the spring's lag; 0 below it).
#[derive(Clone, Copy)]
struct FootAim {
    target: Vec3,
    turn: Quat,
    up: Vec3,
    lag: f32,
}

/// How far into a frame of `dt` seconds a speed moving linearly from `s0` to `s1` crosses
/// `at`, as seconds before the frame's end (the whole frame when it started past it).
fn crossed(s0: f32, s1: f32, at: f32, dt: f32) -> f32 {
    let span = s1 - s0;
    let c = if span != 0.0 { ((at - s0) / span).clamp(0.0, 1.0) } else { 0.0 };
    (1.0 - c) * dt
}

/// [`crossed`] for a speed known at three frame ends, `s0` (negative: unknown), `s1` and
/// `s2`: the crossing of `at` between `s1` and `s2` on the parabola through the three (a
/// foot speeding up as it lifts), its bend limited to what keeps it rising (or falling)
/// across the frame (so the crossing moves continuously with the speeds; none without
/// `s0`: linear), found by bisection, as seconds before the frame's end.
fn crossed_curved(s0: f32, s1: f32, s2: f32, at: f32, dt: f32) -> f32 {
    if (s1 - at) * (s2 - at) > 0.0 {
        return crossed(s1, s2, at, dt);
    }
    // s(u) = s1 + u (b + u a) over the frame, u ∈ [0, 1]: s(1) = s2, s(−1) = s0 unless the
    // bend is limited.
    let d = s2 - s1;
    let a = if s0 >= 0.0 { (0.5 * (s0 - 2.0 * s1 + s2)).clamp(-d.abs(), d.abs()) } else { 0.0 };
    let b = d - a;
    let rising = d > 0.0;
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    for _ in 0..CROSSING_STEPS {
        let mid = 0.5 * (lo + hi);
        if (s1 + mid * (b + mid * a) < at) == rising {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (1.0 - 0.5 * (lo + hi)) * dt
}

/// Plant detection: whether the animation plants the foot this frame (by its contact
/// point's filtered speed with hysteresis, or by its input weight), and how long before the
/// frame's end a speed crossing its threshold did so (0 when no crossing is known).
/// `moving` says whether `LegState::motion` holds a filtered velocity (and becomes so once
/// it does).
fn detect_plant(
    f: &LegFrame,
    ls: &mut LegState,
    was_planted: bool,
    moving: &mut bool,
    p: &Placement,
    ch: &CharacterInput,
) -> (bool, f32) {
    let LegFrame { l, leg, contact_fk, event, .. } = *f;
    let dt = p.dt;

    if p.snap {
        (ls.motion[0], ls.motion[1], ls.motion[2]) = (0.0, 0.0, 0.0);
        *moving = false;
    }
    let mode = leg.plant_detection();
    match mode {
        PLANT_SPEED if !p.snap && dt > 0.0 => {
            // The animation's own motion: without the held snap settling (the character
            // drawn back to its root after a step is not a foot moving), filtered over a
            // fixed time (exact for a contact moving linearly over the frame), so every
            // frame rate reads the same speed.
            let v = (contact_fk - v3(ls.fk) - Vec3::Y * p.settle) / dt;
            let (before, vf) = if *moving {
                let m = v3(ls.motion);
                (m.length(), v + (m - v) * p.plant_decay)
            } else {
                (v.length(), v)
            };
            // The filtered speed a frame earlier still (negative: unknown), and this frame's
            // for the next.
            let earlier = if *moving { ls.free_heading[2] } else { -1.0 };
            ls.free_heading[2] = if *moving { before } else { -1.0 };
            (ls.motion[0], ls.motion[1], ls.motion[2]) = (vf.x, vf.y, vf.z);
            *moving = true;
            let speed = vf.length();
            if was_planted {
                let planted = speed <= leg.plant_exit();
                (planted, if planted { 0.0 } else { crossed_curved(earlier, before, speed, leg.plant_exit(), dt) })
            } else {
                // (Or the frame's own speed below half the enter speed: a foot that stops
                // dead plants at once, whatever the filter still remembers of its swing.)
                let speed = speed.min(2.0 * v.length());
                let planted = speed < leg.plant_enter();
                (planted, if planted { crossed(before, speed, leg.plant_enter(), dt) } else { 0.0 })
            }
        }
        PLANT_SPEED => (was_planted && !p.snap, 0.0),
        PLANT_WEIGHTS => {
            // An input weight reaches 1 (or leaves it) at the moment the caller told or
            // `weigh_foot` placed, or else at its frame's middle, as the weight's blend does.
            let planted = ch.foot_weights[l] >= 1.0;
            (planted, if planted != (ls.heading[3] >= 1.0) && !p.snap { event_or_middle(event, dt) } else { 0.0 })
        }
        _ => (false, 0.0),
    }
}

/// The foot on the ground: the ground normal and the plane of the sole-placed target each
/// follow a spring (never lagging more than `tolerance` below the real ground), and the
/// target blends from the swing target (the FK foot) to the ground target by the weight.
#[allow(clippy::too_many_arguments)] // the leg's context (the kernel keeps it per invocation)
fn ground_target(
    rig: &SolverRig,
    g: &GroundData,
    root: &Root,
    ground: &mut FeetGround,
    p: &Placement,
    ls: &mut LegState,
    f: &LegFrame,
    tolerance: f32,
) -> FootAim {
    let LegFrame { l, leg, three, ball_pivot, h, w, ankle, toe_off, toe_dir, ref_fk, .. } = *f;
    let mut turn = Quat::IDENTITY;

    let (gp, gn) = (ground.point[l], ground.normal[l]);
    // A ground spring with no memory (reset, or no ground last frame) starts at rest.
    let fresh = p.snap || !(ls.plane[1] > 0.0);
    let (mut n, mut nv) = (gn, Vec3::ZERO);
    if !fresh {
        (n, nv) = spring3(v3(ls.plane), v3(ls.plane_velocity), v3(ls.plane_goal), gn, p.ground);
    }
    let mut nf = normalize_or(n, gn, 1e-12);
    if !(nf.y > crate::constants::MIN_GROUND_NORMAL_Y) {
        (n, nv, nf) = (gn, Vec3::ZERO, gn);
    }
    // `roll`: how much higher the foot's own pitch and roll put the target than a foot
    // laid flat would be (`FootAlign::KeepRoll`): the ground spring smooths the flat
    // foot's height (the ground), and the roll is added after, unsmoothed.
    let mut roll = 0.0;
    let raw = if three {
        gp + nf * h
    } else {
        let normal_ms = root.dir_to_model(nf).normalize();
        let (t, limited) = if ball_pivot {
            align_up(leg, root.model_up(), normal_ms)
        } else {
            align_foot(leg, ankle.rotation(), normal_ms, root.model_up())
        };
        (turn, ground.limited[l]) = (t, limited);
        let up_ms = ankle.rotation() * v3(leg.foot_up);
        let sole = (h, leg.sole_reach(), toe_dir);
        let raw = sole_target(rig, g, root, gp, nf, t, up_ms, toe_off, sole);
        if keeps_roll(leg) && !ball_pivot {
            // Measured on the smoothed plane (no ground sampled): the spring smooths
            // the rest, the real ground's, and the sum is `raw` once it settles.
            let (flat, _) = align_up(leg, up_ms, normal_ms);
            roll = plane_sole_gap(root, nf, flat, up_ms, toe_off, sole)
                - plane_sole_gap(root, nf, t, up_ms, toe_off, sole);
        }
        raw
    };
    // The ground height under the target: the smoothed plane carried to this frame's
    // target (exact on a plane however far the foot moves), then its spring toward the
    // real ground, never more than the tolerance below it.
    let (mut y, mut yv) = (raw.y - roll, 0.0);
    if !fresh {
        let (dx, dz) = (raw.x - ls.lift[2], raw.z - ls.lift[3]);
        let carry = (nf.x * dx + nf.z * dz) / nf.y;
        let (carried, from) = (ls.plane[3] - carry, ls.plane_goal[3] - carry);
        (y, yv) = spring(carried, ls.plane_velocity[3], from, raw.y - roll, p.ground);
    }
    ls.plane = n.extend(y).to_array();
    ls.plane_velocity = nv.extend(yv).to_array();
    // The spring runs free; what the foot stands on is never more than the tolerance
    // below the real ground (a limit on the output, not the state, so frame rates
    // agree).
    y = y.max(raw.y - roll - tolerance) + roll;
    let lag = (y - raw.y).max(0.0);
    ls.plane_goal = gn.extend(raw.y - roll).to_array();
    ls.lift[2] = raw.x;
    ls.lift[3] = raw.z;
    // From the swing target (the FK foot, where a root snap left it) to the ground.
    FootAim { target: ref_fk.lerp(Vec3::new(raw.x, y, raw.z), w), turn: nlerp_identity(turn, w), up: nf, lag }
}

/// The lock: the contact point and heading of the unlocked solve (`free`), then held (a
/// planted foot) or blended back (a released one). Returns the aim, whether the foot is
/// locked, and what is left of a release.
#[allow(clippy::too_many_arguments)] // the leg's context (the kernel keeps it per invocation)
fn lock_foot(
    (rig, g, ground): (&SolverRig, &GroundData, &FeetGround),
    root: &Root,
    p: &Placement,
    ls: &mut LegState,
    f: &LegFrame,
    aim: FootAim,
    (was_locked_flag, planted, since): (bool, bool, f32),
    free: &mut FreeFoot,
    hip: Vec3,
    heel: &mut bool,
) -> (FootAim, bool, f32) {
    let LegFrame { l, leg, three, ball_pivot, h, ankle, toe_off, toe_dir, .. } = *f;
    let FootAim { mut target, mut turn, up, lag } = aim;
    let dt = p.dt;

    // A sole pivot's two points, heel and ball of the foot as turned (from the ankle,
    // world).
    let sole_pivot = leg.pivots_on_sole();
    let ends = if sole_pivot {
        let up_ms = ankle.rotation() * v3(leg.foot_up);
        let s = turned_sole(root, Vec3::ZERO, turn, up_ms, toe_off, (h, leg.sole_reach(), toe_dir));
        [s.heel, s.ball]
    } else {
        [Vec3::ZERO; 2]
    };
    let pivot = |heel: bool| if heel { ends[0] } else { ends[1] };
    // Whether a sole pivot holds the heel, the foot's heel and ball standing at `heel_at`
    // and `ball_at` (world): the end held until now (`held`), unless the other is nearer the
    // ground under it by more than the margin (lower along the ground normal where the leg
    // found no ground). The end on the ground, not merely the lower one: a foot landing
    // across a step edge tilts its heel below its ball, into the air over the lower step,
    // while its ball rests on the upper one.
    let margin = SOLE_PIVOT_MARGIN * ends[1].distance(ends[0]);
    let holds_heel = |held: bool, heel_at: Vec3, ball_at: Vec3| {
        let (gp, gn) = (ground.point[l], ground.normal[l]);
        let rise = if ground.hit[l] {
            above(rig, g, gp, gn, ball_at) - above(rig, g, gp, gn, heel_at)
        } else {
            (ball_at - heel_at).dot(up)
        };
        if held {
            rise >= -margin
        } else {
            rise > margin
        }
    };
    // The lock: contact point and heading of the unlocked solve, then held or blended.
    let mut offset = if ball_pivot { root.dir_to_world(turn * toe_off) * root.s } else { pivot(*heel) };
    let free_heading = if three { [0.0, 0.0] } else { heading(root.dir_to_world(turn * toe_off)) };
    let mut free_contact = target + offset;
    *free = FreeFoot {
        contact: free_contact,
        heading: free_heading,
        hip,
        reach: 0.0, // set below for a two-bone leg
    };
    let mut locked = was_locked_flag && !p.snap;
    if p.snap {
        ls.lock = [0.0; 4];
        ls.heading[0] = 0.0;
        ls.heading[1] = 0.0;
    }
    let (release_distance, release_time) = (leg.release_distance(), leg.release_time());
    // An event inside the frame (a speed crossing its threshold, or a weight's flip, `since`
    // seconds before the frame's end): the unlocked solve's contact point's horizontal
    // motion since (taken as linear over the frame), which a lock taken then did not make
    // and a release taken then was not yet apart by. That point, not the animated ankle: a
    // foot rolling about its ball (a toe off) moves its ankle while the ball stays.
    let moved = free_contact - v3(ls.free);
    let moved = Vec3::new(moved.x, 0.0, moved.z);
    let speed = if dt > 0.0 { moved.length() / dt } else { 0.0 };
    let speed_before = ls.free[3];
    // (No event, no back-off: after a reset `moved` is from whatever the state held.)
    let back_by = |since: f32| {
        let f = back_fraction(since, dt, speed, speed_before);
        if f > 0.0 {
            moved * f
        } else {
            Vec3::ZERO
        }
    };
    // The unlocked solve's heading at the event: turned back by the event's share of its
    // turn over the frame (a toe off turns the foot's projected heading quickly), where
    // last frame's heading is known.
    let heading_before = [ls.free_heading[0], ls.free_heading[1]];
    let heading_at = |since: f32| {
        if since > 0.0 && dt > 0.0 && heading_before != [0.0, 0.0] && free_heading != [0.0, 0.0] {
            let r = turn_between(free_heading, heading_before);
            turn_heading(free_heading, fade_turn(atan2(r[1], r[0]), (since / dt).min(1.0)))
        } else {
            free_heading
        }
    };
    let mut back = back_by(since);
    let was_locked = locked;
    if locked {
        let d = v3(ls.lock) - free_contact;
        let far = d.x * d.x + d.z * d.z > release_distance * release_distance;
        if !planted || far {
            let mut since = since;
            if far && dt > 0.0 {
                // Released when the foot went past the release distance, inside the frame
                // (its distance taken as changing linearly, the unlocked solve moving as the
                // animation's contact point did).
                let before = Vec2::new(d.x + moved.x, d.z + moved.z).length();
                since = since.max(crossed(before, Vec2::new(d.x, d.z).length(), release_distance, dt));
                back = back_by(since);
            }
            // The lock's height as this frame carries it (less what it settled last frame),
            // not last frame's height: the offset that fades is from where the locked
            // foot is now, whatever the unlocked solve's height did over the frame.
            ls.lock[1] = free_contact.y - (up.x * d.x + up.z * d.z) / up.y - ls.lock[3];
            release(ls, FreeFoot { heading: heading_at(since), ..*free });
            // Released at the event: the offset the foot had then, fading since.
            ls.lock = (v3(ls.lock) + back).extend(since).to_array();
            locked = false;
        }
    }
    // What is left of the last release (all of it just after one) and its heading turn:
    // a new lock starts from them, an unlocked foot blends back with them (an unlocked
    // foot's state holds the release's offset and heading turn).
    let left = remaining(ls.lock[3], release_time);
    let left_turn = fade_turn(ls.heading[0], left);
    // Where a lock holds the contact point: its place on the ground, at the unlocked solve's
    // height carried along the ground plane to it (so a lock taken while the weight still
    // blends in neither floats nor sinks), and the turn to its heading.
    let held = |ls: &LegState, free_contact: Vec3| {
        let mut c = v3(ls.lock);
        c.y = free_contact.y - (up.x * (c.x - free_contact.x) + up.z * (c.z - free_contact.z)) / up.y;
        (c, turn_between(free_heading, [ls.heading[0], ls.heading[1]]))
    };
    // A sole pivot's end, decided once a frame where the foot stands: a lock held from last
    // frame passes to the other end of the sole (where this frame's foot, about the end
    // held, has it) when the foot rolls through flat; an unlocked foot with no release
    // fading follows the end on the ground (its output does not depend on it), and a new
    // lock holds that end.
    let mut pass_to = None;
    // A lock held from last frame: where it holds the contact, found once for the pivot's
    // decision and the lock below (nothing moves either in between).
    let mut held_now = if locked { Some(held(ls, free_contact)) } else { None };
    if sole_pivot {
        let (heel_at, ball_at, other) = if let Some((c, r)) = held_now {
            let other = c + quat_from_axis_cos_sin(up, r[0], r[1]) * (pivot(!*heel) - offset);
            if *heel {
                (c, other, other)
            } else {
                (other, c, other)
            }
        } else {
            (target + ends[0], target + ends[1], Vec3::ZERO)
        };
        if *heel != holds_heel(*heel, heel_at, ball_at) {
            if locked {
                pass_to = Some(other);
            } else if !(left > 0.0) {
                *heel = !*heel;
                offset = pivot(*heel);
                free_contact = target + offset;
                free.contact = free_contact;
            }
        }
    }
    if !was_locked && planted {
        let lock_heading = turn_heading(heading_at(since), left_turn);
        // Planted at the crossing: the contact point where the animation had it then.
        let contact = free_contact - back + v3(ls.lock) * left;
        ls.lock = contact.extend(0.0).to_array();
        ls.heading[0] = lock_heading[0];
        ls.heading[1] = lock_heading[1];
        locked = true;
        held_now = Some(held(ls, free_contact));
    }
    let mut fading = 0.0; // what is left of a release
    let (contact, r) = if let Some((mut c, r)) = held_now {
        // The lock holds the contact point's place on the ground and its heading.
        if let Some(other) = pass_to {
            // The foot rolled through flat: the lock passes to the other end of the sole.
            c = other;
            *heel = !*heel;
            offset = pivot(*heel);
            free_contact = target + offset;
            free.contact = free_contact;
            ls.lock[0] = c.x;
            ls.lock[2] = c.z;
        }
        ls.lock[1] = c.y;
        ls.lock[3] = 0.0; // settled below the carried height by `lift_foot`
        (c, r)
    } else {
        fading = left;
        ls.lock[3] = (ls.lock[3] + dt).min(release_time.max(0.0));
        (free_contact + v3(ls.lock) * fading, left_turn)
    };
    target = contact - offset;
    if !three && (free_heading[0] != 0.0 || free_heading[1] != 0.0) && r != [1.0, 0.0] {
        // The heading held: the foot turned about the ground normal.
        let spin_ws = quat_from_axis_cos_sin(up, r[0], r[1]);
        target = contact - spin_ws * offset;
        turn = quat_from_axis_cos_sin(root.dir_to_model(up), r[0], r[1] * root.m) * turn;
    }
    // This frame's speed and heading of the unlocked solve, for the next frame's events
    // (unknown after a reset, or a frame in which no time passed: the point it moved from
    // was not this foot's); the filtered speed's word is plant detection's (unknown after a
    // reset, whatever the state held).
    let known = !p.snap && dt > 0.0;
    ls.free = free.contact.extend(if known { speed } else { -1.0 }).to_array();
    let h = if known { free_heading } else { [0.0; 2] };
    ls.free_heading = [h[0], h[1], if p.snap { -1.0 } else { ls.free_heading[2] }, ls.free_heading[3]];
    (FootAim { target, turn, up, lag }, locked, fading)
}

/// No part of the foot (heel and ball as turned, or a hoof tip) more than `tolerance` below
/// the ground: a swinging or blending foot is lifted, smoothly (the ground spring), and
/// early where the ground rises ahead of it (the look-ahead at the FK foot's horizontal
/// speed); a locked foot at full weight settles onto the ground under it. Returns the
/// target.
#[allow(clippy::too_many_arguments)] // the leg's context (the kernel keeps it per invocation)
fn lift_foot(
    rig: &SolverRig,
    g: &GroundData,
    root: &Root,
    ground: &FeetGround,
    p: &Placement,
    ls: &mut LegState,
    f: &LegFrame,
    ch: &CharacterInput,
    aim: FootAim,
    (locked, fading): (bool, f32),
    tolerance: f32,
) -> Vec3 {
    let LegFrame { l, leg, w, ankle, toe_off, toe_dir, contact_fk, .. } = *f;
    let FootAim { mut target, turn, lag, .. } = aim;
    let dt = p.dt;

    // No part of the foot (heel and ball as turned, or a hoof tip) more than the
    // tolerance below the ground: a swinging or blending foot is lifted, smoothly
    // (the ground spring), and early where the ground rises ahead of it (the
    // lookahead at the FK foot's horizontal speed).
    let up_ms = ankle.rotation() * v3(leg.foot_up);
    let (gp, gn) = (ground.point[l], ground.normal[l]);
    // The foot as turned, in world space: its up axis, the toe from the ankle and the toe's
    // direction past the ball.
    let foot =
        (root.dir_to_world(turn * up_ms), root.dir_to_world(turn * toe_off) * root.s, toe_dir_ws(root, turn, toe_dir));
    // A foot on its ground target (full weight, not locked, no release fading) is
    // on the ground by construction: nothing to measure.
    let grounded = w >= 1.0 && !locked && fading == 0.0;
    let gap = if grounded { 0.0 } else { foot_gap(rig, g, leg, target, foot, (gp, gn), false) };
    let need = (-gap - tolerance).max(0.0);
    // A swinging (not planted, not locked) foot looks ahead along its FK motion.
    let mut need_ahead = 0.0;
    if !p.snap && !locked && w < 1.0 && dt > 0.0 {
        let velocity = (contact_fk - v3(ls.fk)) / dt;
        let ahead = target + Vec3::new(velocity.x, 0.0, velocity.z) * rig.swing_lookahead();
        // The leading point (the ball, or a hoof tip's sole) alone: a look ahead.
        let gap = foot_gap(rig, g, leg, ahead, foot, (gp, gn), true);
        // Only while the animation swings the foot: a foot it plants looks no further.
        need_ahead = (-gap - tolerance).max(0.0) * (1.0 - w.max(ch.foot_weights[l].clamp(0.0, 1.0)));
    }
    let goal = need.max(need_ahead);
    let (mut lift, mut lv) = (goal, 0.0);
    if !p.snap {
        (lift, lv) = spring(ls.lift[0], ls.lift[1], ls.heading[2], goal, p.ground);
    }
    ls.heading[2] = goal;
    ls.lift[0] = lift;
    ls.lift[1] = lv;
    // The lift keeps the swing target (the FK foot) clear; it fades as the weight
    // blends the target onto the ground, so a foot that plants is on the ground. Once the
    // animation plants the foot (by its input weight) the lift holds it no higher than
    // this frame's goal: a spring still rising from the swing (the look-ahead over a
    // step) would lift a planted foot off the ground and land it again as the blend ends.
    let planted_input = ch.foot_weights[l].clamp(0.0, 1.0);
    let held = lift + (lift.min(goal) - lift) * planted_input;
    target.y += (held * (1.0 - w)).max(need);
    if locked && w >= 1.0 {
        // A locked foot settles onto the ground under it, in two parts, each all of it
        // up to a bound and then less, down to the tolerance (continuous, and a part that
        // jumps moves the foot by at most its bound). First the ground spring's lag above
        // the real ground, which the sole's contact moving over creased ground leaves (a
        // heel rising onto the ball across a crease): all of up to 4.5 times the
        // tolerance, none past eight (the spring's lag after a step down is the landing
        // it smooths). Then what is left: the height carried along the plane from the
        // animated foot, which curved ground leaves above the lock: all of up to five
        // times the tolerance, none past nine (over a step edge the carried height stands).
        let tolerance = rig.ground_tolerance();
        let spring_lag = gap.clamp(0.0, lag);
        let rest = gap - spring_lag;
        let settle = spring_lag.min(tolerance.max(9.0 * tolerance - lag))
            + rest.clamp(0.0, tolerance.max(10.0 * tolerance - rest));
        target.y -= settle;
        ls.lock[1] -= settle;
        ls.lock[3] = settle;
    }
    target
}

/// No ground under the foot: its ground springs forget it.
fn forget_ground(ls: &mut LegState) {
    ls.plane = [0.0; 4];
    ls.plane_velocity = [0.0; 4];
    ls.plane_goal = [0.0; 4];
    ls.lift = [0.0; 4];
    ls.heading[2] = 0.0;
}

/// Feet: per leg, the final target and foot turn of this frame, in stages: plant detection
/// (`detect_plant`), the ground target (`ground_target`), the lock (`lock_foot`), the lift
/// (`lift_foot`). Fills `ground.target`, `turn`, `limited`, `aimed` and the pelvis goal and
/// reach cap.
#[allow(clippy::too_many_arguments)] // the kernel's twin takes the same
#[allow(clippy::needless_range_loop)] // one index over every per-leg array, as in the kernel
pub(crate) fn place_feet(
    rig: &SolverRig,
    g: &GroundData,
    ch: &CharacterInput,
    root: &Root,
    pose_in: &[JointPose],
    ground: &mut FeetGround,
    p: &Placement,
    state: &mut CharacterState,
    free: &mut [FreeFoot; MAX_LEGS],
) -> (f32, f32) {
    // A reset starts from clean flags (no stray bit survives it).
    let mut flags = if p.snap { 0 } else { state.flags };
    let (mut goal, mut cap) = (0.0f32, f32::MIN); // no two-bone leg: no cap
    for l in 0..rig.leg_count() as usize {
        let leg = &rig.legs[l];
        let three = leg.is_three_bone();
        let ball_pivot = !three && leg.pivots_on_ball();
        let (ankle, toe) = (pose_in[leg.ankle() as usize], pose_in[leg.toe() as usize]);
        let ref_fk = root.to_world(pose_in[reference_joint(leg)].position());
        let contact_fk = if ball_pivot { root.to_world(toe.position()) } else { ref_fk };
        // The FK contact's height above the held root, this frame and last.
        let (now, last) = (contact_fk.y - root.t.y, state.legs[l].fk[1] - (state.root[0] + state.pelvis[2]));
        let eps = 8.0 * f32::EPSILON * root.t.y.abs() + 64.0 * f32::EPSILON * (now.abs() + last.abs() + root.s);
        let heights = (now, last, eps);
        let (w, event) = weigh_foot(rig, &mut state.legs[l], ch, l, heights, p.snap, p.dt);
        let f = LegFrame {
            l,
            leg,
            three,
            ball_pivot,
            h: leg.foot_height(),
            w,
            event,
            ankle,
            toe_off: toe.position() - ankle.position(),
            toe_dir: toe_dir_ms(leg, toe.rotation()),
            ref_fk,
            contact_fk,
        };
        let ls = &mut state.legs[l];
        let mut moving = flags & bit(STATE_MOTION_SHIFT, l) != 0;
        let (detected, since) = detect_plant(&f, ls, flags & bit(STATE_PLANTED_SHIFT, l) != 0, &mut moving, p, ch);
        let planted = detected && ground.hit[l] && ch.foot_weights[l] > 0.0;
        // A foot lifted by its input weight going to 0 this frame: lifted at the moment the
        // caller told or `weigh_foot` placed, or else in the frame's middle.
        let lifted = !(ch.foot_weights[l] > 0.0) && ls.heading[3] > 0.0 && !p.snap;
        let since = if lifted { event_or_middle(event, p.dt) } else { since };
        // A swinging foot may lag the tolerance below the ground (so it does not jitter over
        // rough ground); a planted one stands on it.
        let tolerance = if planted { 0.0 } else { rig.ground_tolerance() };
        let mut aim = FootAim { target: ref_fk, turn: Quat::IDENTITY, up: Vec3::Y, lag: 0.0 };
        if ground.hit[l] {
            aim = ground_target(rig, g, root, ground, p, ls, &f, tolerance);
        }
        let hip = root.to_world(pose_in[leg.hip() as usize].position());
        let was_locked = flags & bit(STATE_LOCKED_SHIFT, l) != 0;
        // A lock let go while the foot stayed planted (it drifted past the release distance
        // or out of reach) is not taken again before its release has faded: the foot steps
        // back to the animation, then locks there, rather than lock and let go every frame.
        let released = flags & bit(STATE_RELEASED_SHIFT, l) != 0 && planted && !p.snap;
        let may_lock = planted && !(released && remaining(ls.lock[3], leg.release_time()) > 0.0);
        let mut heel = flags & bit(STATE_HEEL_SHIFT, l) != 0;
        let (aim, locked, fading) = lock_foot(
            (rig, g, ground),
            root,
            p,
            ls,
            &f,
            aim,
            (was_locked, may_lock, since),
            &mut free[l],
            hip,
            &mut heel,
        );
        let (mut target, turn) = (aim.target, aim.turn);
        if ground.hit[l] {
            target = lift_foot(rig, g, root, ground, p, ls, &f, ch, aim, (locked, fading), tolerance);
        } else {
            forget_ground(ls);
        }

        ls.fk = contact_fk.extend(w).to_array();
        flags &= !(bit(STATE_LOCKED_SHIFT, l)
            | bit(STATE_PLANTED_SHIFT, l)
            | bit(STATE_RELEASED_SHIFT, l)
            | bit(STATE_HEEL_SHIFT, l)
            | bit(STATE_MOTION_SHIFT, l));
        if moving {
            flags |= bit(STATE_MOTION_SHIFT, l);
        }
        if heel {
            flags |= bit(STATE_HEEL_SHIFT, l);
        }
        if locked {
            flags |= bit(STATE_LOCKED_SHIFT, l);
        } else if planted && !p.snap && (released || was_locked) {
            flags |= bit(STATE_RELEASED_SHIFT, l);
        }
        if detected {
            flags |= bit(STATE_PLANTED_SHIFT, l);
        }
        ls.heading[3] = ch.foot_weights[l].clamp(0.0, 1.0);
        ground.target[l] = target;
        ground.turn[l] = turn;
        ground.aimed[l] = true;
        let mut need = ref_fk.y - target.y;
        if !three {
            free[l].reach = leg_reach(pose_in, leg, root.s);
            // A locked leg within `max_reach` of its reach (what keeps its lock), any other
            // within its reach.
            let within = if locked { free[l].reach * rig.max_reach() } else { free[l].reach };
            let reach = reach_drop(within, free[l].hip, target);
            need = need.max(reach);
            cap = cap.max(reach);
        }
        goal = goal.max(need);
    }
    state.flags = flags;
    (goal, cap)
}

/// Height above the ground of the lowest point of a foot whose reference joint is at `at`
/// (world), the foot's up axis, toe offset and toe direction (world, as turned) given: heel
/// to tip (two-bone), or the tip less the foot height (pseudo three-bone); with `lead`, of
/// its leading point alone (the tip), for a look ahead.
#[allow(clippy::too_many_arguments)] // the kernel's twin takes the same
fn foot_gap(
    rig: &SolverRig,
    g: &GroundData,
    leg: &SolverLeg,
    at: Vec3,
    (up, toe_off, toe_dir): (Vec3, Vec3, Vec3),
    (gp, gn): (Vec3, Vec3),
    lead: bool,
) -> f32 {
    let h = leg.foot_height();
    if leg.is_three_bone() {
        let sole = at - Vec3::Y * h;
        return sole.y - ground_height(rig, g, gp, gn, sole.x, sole.z);
    }
    if lead {
        let tip = sole_ends(at, toe_off, up, h, leg.sole_reach(), toe_dir).tip;
        return above(rig, g, gp, gn, tip);
    }
    sole_height(rig, g, gp, gn, at, at + toe_off, up, (h, leg.sole_reach(), toe_dir))
}

/// Starts the release of a locked foot: the offset from the unlocked solve is kept and fades
/// over the release time (in the places of the locked point and heading, which an unlocked
/// foot does not need).
fn release(ls: &mut crate::crowd::LegState, free: FreeFoot) {
    let d = v3(ls.lock) - free.contact;
    let r = turn_between(free.heading, [ls.heading[0], ls.heading[1]]);
    ls.lock = d.extend(0.0).to_array();
    ls.heading[0] = atan2(r[1], r[0]);
    ls.heading[1] = 0.0;
}

/// Pelvis: the offset follows a critically damped spring toward this frame's stateless
/// drop (relative to the character held where a root snap left it); with the snap held,
/// within `[−max drop, max rise]` of FK, and never above what lets every leg reach its
/// target (`cap`); the whole output offset (spring and held snap) moves at most
/// `pelvis_max_speed` unless those bounds need it faster (flagged `PELVIS_FAST`). The
/// state keeps what was output, so no bound letting go makes it jump.
/// Returns the model-space offset.
pub(crate) fn spring_pelvis(
    rig: &SolverRig,
    root: &Root,
    p: &Placement,
    goal_drop: f32,
    cap: f32,
    state: &mut CharacterState,
    res: &mut FootResult,
) -> Vec3 {
    let [_, max_speed, max_rise, _] = rig.springs;
    let max_drop = rig.max_pelvis_drop();
    let goal = -goal_drop.clamp(0.0, max_drop);
    let lo = -max_drop - p.held;
    let hi = (max_rise - p.held).min(-cap).max(lo);
    let step = max_speed * p.dt;
    let (mut o, mut v) = (goal, 0.0);
    if !p.snap {
        let (x, xv) = spring(state.pelvis[0], state.pelvis[1], state.root[1], goal, p.pelvis);
        v = xv.max(-max_speed).min(max_speed);
        // The whole offset (spring and held snap) moves at most max_speed (max then min, as
        // WGSL's clamp: no panic whatever the bounds).
        o = (x + p.held).max(p.start - step).min(p.start + step) - p.held;
    }
    // The bounds win: a leg reaches its target (flagged where that is faster).
    let bounded = o.max(lo).min(hi);
    let offset = bounded + p.held;
    if !p.snap && bounded != o && !(offset >= p.start - step && offset <= p.start + step) {
        for status in &mut res.status[..rig.leg_count() as usize] {
            *status |= foot::PELVIS_FAST;
        }
    }
    state.pelvis = [offset - p.held, v, p.held, p.held_velocity];
    state.root = [root.t.y, goal];
    state.root_velocity = p.root_velocity;
    res.pelvis[0] = -offset;
    res.pelvis[1] = -goal;
    res.pelvis[2] = p.jump;
    root.dir_to_model(Vec3::new(0.0, offset, 0.0)) / root.s
}

/// End: a locked two-bone leg whose hip (after the pelvis) is farther from its target than
/// `max_reach` of its reach is released (from the next frame; this frame keeps the target,
/// so nothing pops); status bits; the state marked valid.
#[allow(clippy::too_many_arguments)] // the kernel's twin takes the same
#[allow(clippy::needless_range_loop)] // one index over every per-leg array, as in the kernel
pub(crate) fn end_placement(
    rig: &SolverRig,
    ground: &FeetGround,
    p: &Placement,
    free: &[FreeFoot; MAX_LEGS],
    state: &mut CharacterState,
    res: &mut FootResult,
) {
    let mut flags = state.flags;
    for l in 0..rig.leg_count() as usize {
        if flags & bit(STATE_LOCKED_SHIFT, l) != 0 && !rig.legs[l].is_three_bone() {
            // The hip lowered by the pelvis offset within its limits (the held snap is in the
            // hip already).
            let hip_ws = free[l].hip + Vec3::Y * (-res.pelvis[0] - p.held);
            // (With a margin of 1e-4 of the reach: a pelvis the reach cap holds puts the hip
            // at exactly this distance, which rounding must not turn into a release.)
            if (ground.target[l] - hip_ws).length() > free[l].reach * (rig.max_reach() + 1e-4) {
                release(&mut state.legs[l], free[l]);
                flags &= !bit(STATE_LOCKED_SHIFT, l);
                if flags & bit(STATE_PLANTED_SHIFT, l) != 0 {
                    flags |= bit(STATE_RELEASED_SHIFT, l);
                }
            }
        }
        if flags & bit(STATE_LOCKED_SHIFT, l) != 0 {
            res.status[l] |= foot::LOCKED;
        }
        if p.snap {
            res.status[l] |= foot::RESET;
        }
    }
    state.flags = flags | STATE_VALID;
}
