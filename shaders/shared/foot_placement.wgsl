// Foot placement across frames: the temporal stages of the foot_ik kernel, the WGSL twin of
// src/cpu/foot_placement.rs (same stage names). It builds on the kernel's inputs, ground and
// foot geometry (shaders/shared/foot_ground.wgsl: bindings, `rig`, `ground`, `res`) and the
// state buffer's accessors (shaders/shared/foot_state.wgsl); shaders/kernels/foot_ik.wgsl
// calls it, never the other way.

#import crowd
#import math
#import foot_ground
#import foot_state

// f32::EPSILON: the rounding of heights taken from world coordinates (weigh_foot).
const F32_EPSILON: f32 = 1.1920929e-7;

// This character's state: its rig's legs and the character's values read once into `st`
// by begin_placement and written back once by end_placement (with constant leg indices it
// stays in registers).
var<private> pl_c: u32;
var<private> st: CharacterState;
var<private> pl_snap: bool;                          // the state resets this frame
var<private> pl_weights: vec4<f32>;                  // foot weights blended over time
var<private> pl_events: vec4<f32>;                   // when each input weight took its value (< 0: not known)
var<private> pl_held: vec2<f32>;                     // the root snap still held, its velocity
var<private> pl_start: f32;                          // last pelvis offset, this frame's snap held
var<private> pl_jump: f32;                           // the root snap taken this frame
var<private> pl_root_velocity: f32;                  // the root's continuous vertical velocity
var<private> pl_settle: f32;                         // how far the held snap moved the character
var<private> pl_rates: vec2<f32>;                    // spring rates: pelvis, ground

// Per leg, what place_feet leaves for end_placement (FreeFoot in src/cpu/foot_placement.rs).
struct FreeFoot {
    contact: vec3<f32>, // where the unlocked solve puts the contact point (world)
    heading: vec2<f32>, // and its heading
    hip: vec3<f32>,     // the hip the pelvis goal was measured from (world, snap held)
    reach: f32,         // the leg's reach (leg_reach; two-bone legs)
}
var<private> free: array<FreeFoot, MAX_LEGS>;

// A critically damped spring, exact for any dt toward a goal moving linearly over the frame
// from `goal0` to `goal`: (value, velocity). `y` = 2 ln 2 / half-life (0: at the goal at
// once), `e` = exp(-y dt) computed on the host (FrameInput).
fn spring(x: f32, v: f32, goal0: f32, goal: f32, y: f32, e: f32, dt: f32) -> vec2<f32> {
    if (!(y > 0.0)) {
        return vec2<f32>(goal, 0.0);
    }
    if (!(dt > 0.0)) {
        return vec2<f32>(x, v);
    }
    // A goal faster than MAX_GOAL_SPEED jumped: followed as a step to where it is now.
    var gv = (goal - goal0) / dt;
    var start = goal0;
    if (!(abs(gv) <= MAX_GOAL_SPEED)) {
        start = goal;
        gv = 0.0;
    }
    let lag = -2.0 * gv / y;
    let j0 = x - start - lag;
    let j1 = (v - gv) + j0 * y;
    return vec2<f32>(goal + lag + e * (j0 + j1 * dt), gv + e * (v - gv - j1 * y * dt));
}

// A spring's rate for a half-life: 2 ln 2 / half-life, 0 for none (src/crowd/placement.rs).
fn spring_rate(half_life: f32) -> f32 {
    if (half_life > 0.0) {
        return 2.0 * LN_2 / half_life;
    }
    return 0.0;
}

// w after dt moving toward a goal at most `rate` per second, the goal moving linearly from
// `goal0` to `goal` over the frame (src/cpu/foot_placement.rs).
fn follow(w: f32, goal0: f32, goal: f32, rate: f32, dt: f32) -> f32 {
    if (!(dt > 0.0)) {
        return w;
    }
    let gv = (goal - goal0) / dt;
    let toward = select(-rate, rate, goal0 > w);
    let closing = toward - gv;
    var t = 3.40282347e38;
    if (goal0 == w) {
        t = 0.0;
    } else if (closing * (goal0 - w) > 0.0) {
        t = (goal0 - w) / closing;
    }
    if (!(t < dt)) {
        return w + toward * dt;
    }
    let met = goal0 + gv * t;
    if (abs(gv) <= rate) {
        return goal;
    }
    return met + sign(gv) * rate * (dt - t);
}

// A foot weight after dt blending at most `rate` per second toward an input that went from
// goal0 to goal: one no faster than the blend as moving linearly over the frame, a faster
// one (a 0/1 event) as a ramp centred in the frame, rate dt / |goal - goal0| of it long
// (src/cpu/foot_placement.rs).
fn blend_weight(w: f32, goal0: f32, goal: f32, rate: f32, dt: f32, event: f32) -> f32 {
    // Where the caller told when the input took its value, it stepped then.
    if (event >= 0.0 && event <= dt && goal != goal0) {
        let w1 = follow(w, goal0, goal0, rate, dt - event);
        return follow(w1, goal, goal, rate, event);
    }
    let jump = abs(goal - goal0);
    if (!(jump > rate * dt)) {
        return follow(w, goal0, goal, rate, dt);
    }
    let ramp = dt * (rate * dt / jump);
    let before = 0.5 * (dt - ramp);
    let w1 = follow(w, goal0, goal0, rate, before);
    let w2 = follow(w1, goal0, goal, rate, ramp);
    return follow(w2, goal, goal, rate, dt - before - ramp);
}

// When leg l's weight took its value this frame, as seconds before the frame's end: as
// weigh_foot found it, else the frame's middle (src/cpu/foot_placement.rs, event_or_middle).
fn event_time(l: u32, dt: f32) -> f32 {
    if (pl_events[l] >= 0.0) {
        return pl_events[l];
    }
    return 0.5 * dt;
}

// What is left of a release offset t seconds after the release (smoothstep to 0 at `time`).
fn remaining(t: f32, time: f32) -> f32 {
    if (!(time > 0.0) || t >= time) {
        return 0.0;
    }
    // Never below 0: a garbled state's negative time must not scale the offset past 1.
    let x = max(t / time, 0.0);
    return 1.0 - x * x * (3.0 - 2.0 * x);
}

// The heading of a world direction: its x, z normalised, zero when it is vertical.
fn heading(f: vec3<f32>) -> vec2<f32> {
    let len2 = f.x * f.x + f.z * f.z;
    if (len2 > 1e-12) {
        let r = 1.0 / sqrt(len2);
        return vec2<f32>(f.x * r, f.z * r);
    }
    return vec2<f32>(0.0);
}

// Cosine and sine of the turn about world up from heading a to heading b.
fn turn_between(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
}

fn turn_heading(a: vec2<f32>, r: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * r.x + a.y * r.y, a.y * r.x - a.x * r.y);
}

// Cosine and sine of the turn from heading h to the heading leg l's lock holds (none where
// either has no horizontal length; src/cpu/foot_placement.rs, turn_to_lock).
fn turn_to_lock(l: u32, h: vec2<f32>) -> vec2<f32> {
    let locked = st.legs[l].heading.xy;
    if (any(h != vec2<f32>(0.0)) && locked.x * locked.x + locked.y * locked.y > 1e-12) {
        return turn_between(h, locked);
    }
    return vec2<f32>(1.0, 0.0);
}

// The point of sole s a sole pivot holds (its heel or ball, as the state says), or `other`
// for the other pivots (src/cpu/foot_placement.rs, sole_pivot).
fn sole_pivot_point(l: u32, s: Sole, other: vec3<f32>) -> vec3<f32> {
    if (!sole_pivot(l)) {
        return other;
    }
    if ((st.flags & state_bit(STATE_HEEL_SHIFT, l)) != 0u) {
        return s.heel;
    }
    return s.ball;
}

// Where a foot locked in the state stands, for find_ground (src/cpu/foot_placement.rs,
// locked_sole): its FK sole turned about the vertical through its contact point from the
// FK heading to the locked one and carried to the locked point.
fn locked_sole(l: u32, s: Sole, ref_ws: vec3<f32>, toe_ws: vec3<f32>) -> Sole {
    var contact = sole_pivot_point(l, s, ref_ws);
    if (ball_pivot(l)) {
        contact = toe_ws;
    }
    let r = turn_to_lock(l, heading(toe_ws - ref_ws));
    let lock = vec3<f32>(st.legs[l].lock.x, contact.y, st.legs[l].lock.z);
    let dh = turn_heading((s.heel - contact).xz, r);
    let db = turn_heading((s.ball - contact).xz, r);
    let dt = turn_heading((s.tip - contact).xz, r);
    return Sole(lock + vec3<f32>(dh.x, s.heel.y - contact.y, dh.y), lock + vec3<f32>(db.x, s.ball.y - contact.y, db.y),
        lock + vec3<f32>(dt.x, s.tip.y - contact.y, dt.y));
}

// A locked foot turned to the ground (its sole s turned about its ankle ankle_ws), for
// the second ground measure: spun about the ground normal up through the ankle from its own
// heading (that of toe_off_ws) to the locked heading and carried to the lock, as the lock
// places it (src/cpu/foot_placement.rs, locked_turned_sole). Only for a locked foot.
fn locked_turned_sole(l: u32, s: Sole, ankle_ws: vec3<f32>, toe_off_ws: vec3<f32>, up: vec3<f32>) -> Sole {
    let r = turn_to_lock(l, heading(toe_off_ws));
    let spin = quat_from_axis_cos_sin(up, r.x, r.y);
    let contact = sole_pivot_point(l, s, ankle_ws);
    let lock = vec3<f32>(st.legs[l].lock.x, contact.y, st.legs[l].lock.z);
    return Sole(lock + quat_rotate(spin, s.heel - contact), lock + quat_rotate(spin, s.ball - contact),
        lock + quat_rotate(spin, s.tip - contact));
}

// A heading offset of `angle` radians blended toward none by k in [0, 1]: cosine and sine
// of angle * k (the angle fades, so a half-turn offset turns back smoothly, one way).
fn fade_turn(angle: f32, k: f32) -> vec2<f32> {
    let sc = sin_cos(angle * k);
    return vec2<f32>(sc.y, sc.x);
}

// A character's record in the state buffer: 2 vec4s (pelvis; root, flags), then 10 per leg
// of the rig (src/gpu/crowd.rs, state_bytes).
const LEG_VEC4S: u32 = 10u;
fn state_record(c: u32) -> u32 {
    return c * (2u + LEG_VEC4S * LEGS);
}

fn load_leg(b: u32) -> LegState {
    return LegState(bitcast<vec4<f32>>(state_get(b)), bitcast<vec4<f32>>(state_get(b + 1u)), bitcast<vec4<f32>>(state_get(b + 2u)),
        bitcast<vec4<f32>>(state_get(b + 3u)), bitcast<vec4<f32>>(state_get(b + 4u)), bitcast<vec4<f32>>(state_get(b + 5u)),
        bitcast<vec4<f32>>(state_get(b + 6u)), bitcast<vec4<f32>>(state_get(b + 7u)), bitcast<vec4<f32>>(state_get(b + 8u)),
        bitcast<vec4<f32>>(state_get(b + 9u)));
}

fn store_leg(b: u32, ls: LegState) {
    state_set(b, bitcast<vec4<u32>>(ls.plane));
    state_set(b + 1u, bitcast<vec4<u32>>(ls.plane_velocity));
    state_set(b + 2u, bitcast<vec4<u32>>(ls.plane_goal));
    state_set(b + 3u, bitcast<vec4<u32>>(ls.lock));
    state_set(b + 4u, bitcast<vec4<u32>>(ls.fk));
    state_set(b + 5u, bitcast<vec4<u32>>(ls.heading));
    state_set(b + 6u, bitcast<vec4<u32>>(ls.lift));
    state_set(b + 7u, bitcast<vec4<u32>>(ls.motion));
    state_set(b + 8u, bitcast<vec4<u32>>(ls.free));
    state_set(b + 9u, bitcast<vec4<u32>>(ls.free_heading));
}

// Reads this character's state into `st` (the leg slots past the rig's stay zero).
fn load_state() {
    let b = state_record(pl_c);
    st.pelvis = bitcast<vec4<f32>>(state_get(b));
    let head = state_get(b + 1u);
    st.root = bitcast<vec2<f32>>(head.xy);
    st.flags = head.z;
    st.root_velocity = bitcast<f32>(head.w);
    if (LEGS > 0u) { st.legs[0] = load_leg(b + 2u); }
    if (LEGS > 1u) { st.legs[1] = load_leg(b + 2u + LEG_VEC4S); }
    if (LEGS > 2u) { st.legs[2] = load_leg(b + 2u + 2u * LEG_VEC4S); }
    if (LEGS > 3u) { st.legs[3] = load_leg(b + 2u + 3u * LEG_VEC4S); }
}

// Writes `st` back.
fn store_state() {
    let b = state_record(pl_c);
    state_set(b, bitcast<vec4<u32>>(st.pelvis));
    state_set(b + 1u, vec4<u32>(bitcast<vec2<u32>>(st.root), st.flags, bitcast<u32>(st.root_velocity)));
    if (LEGS > 0u) { store_leg(b + 2u, st.legs[0]); }
    if (LEGS > 1u) { store_leg(b + 2u + LEG_VEC4S, st.legs[1]); }
    if (LEGS > 2u) { store_leg(b + 2u + 2u * LEG_VEC4S, st.legs[2]); }
    if (LEGS > 3u) { store_leg(b + 2u + 3u * LEG_VEC4S, st.legs[3]); }
}

// Clears character c's flags: without STATE_VALID its next frame resets the state, which
// rewrites every value (src/cpu/foot_ik.rs does the same). One word, not the record: the
// kernel pays for this store in every invocation, the valid ones masked off.
fn forget_state(c: u32) {
    state_clear_flags(state_record(c) + 1u);
}

fn leg_state_sum(l: u32) -> vec4<f32> {
    let ls = st.legs[l];
    return abs(ls.plane) + abs(ls.plane_velocity) + abs(ls.plane_goal) + abs(ls.lock) + abs(ls.fk) + abs(ls.heading) + abs(ls.motion) + abs(ls.free) + abs(ls.free_heading);
}

fn leg_heading(l: u32) -> f32 {
    let h = abs(st.legs[l].heading.xy);
    return max(h.x, h.y);
}

// Whether the state is one the crate could have written (src/cpu/foot_placement.rs,
// state_in_range): no stray flag bit, the sum of its values' magnitudes within
// MAX_STATE_MAGNITUDE (NaN or inf anywhere makes it NaN or inf), every heading word within
// MAX_STATE_HEADING.
fn state_in_range() -> bool {
    var sum = abs(st.pelvis) + abs(vec4<f32>(st.root, st.root_velocity, 0.0));
    var heading = 0.0;
    if (LEGS > 0u) { sum = sum + leg_state_sum(0u) + abs(st.legs[0].lift); heading = max(heading, leg_heading(0u)); }
    if (LEGS > 1u) { sum = sum + leg_state_sum(1u) + abs(st.legs[1].lift); heading = max(heading, leg_heading(1u)); }
    if (LEGS > 2u) { sum = sum + leg_state_sum(2u) + abs(st.legs[2].lift); heading = max(heading, leg_heading(2u)); }
    if (LEGS > 3u) { sum = sum + leg_state_sum(3u) + abs(st.legs[3].lift); heading = max(heading, leg_heading(3u)); }
    let total = (sum.x + sum.y) + (sum.z + sum.w);
    let mask = (1u << LEGS) - 1u;
    let known = STATE_VALID | (mask << STATE_LOCKED_SHIFT) | (mask << STATE_PLANTED_SHIFT)
        | (mask << STATE_RELEASED_SHIFT) | (mask << STATE_HEEL_SHIFT) | (mask << STATE_MOTION_SHIFT);
    return (st.flags & ~known) == 0u && total <= MAX_STATE_MAGNITUDE && heading <= MAX_STATE_HEADING;
}

fn state_bit(shift: u32, l: u32) -> u32 {
    return 1u << (shift + l);
}

// Begin: whether the state resets this frame, and the root snap held (the weights are
// blended per leg by weigh_foot; src/cpu/foot_placement.rs).
fn begin_placement(ch: CharacterInput, root: Root) {
    let dt = frame.dt;
    load_state();
    pl_rates = vec2<f32>(spring_rate(rig_pelvis_half_life()), spring_rate(rig_ground_half_life()));
    pl_snap = (st.flags & STATE_VALID) == 0u || !state_in_range() || !(dt <= MAX_FRAME_TIME);
    if (pl_snap) {
        st.flags = 0u; // a reset starts from clean flags
    }
    // (Each leg's weight is blended where place_foot begins, by weigh_foot, as the CPU
    // twin's place_feet does.)
    pl_weights = vec4<f32>(0.0);
    pl_events = vec4<f32>(-1.0);
    pl_held = vec2<f32>(0.0);
    pl_start = 0.0;
    pl_jump = 0.0;
    pl_root_velocity = 0.0;
    pl_settle = 0.0;
    if (!pl_snap) {
        var held = st.pelvis.z;
        pl_root_velocity = st.root_velocity;
        // Beyond where last frame's vertical velocity carries the root (with dt = 0, any
        // move is a jump); the velocity carried is the root's within 0.9 of the snap speed.
        let snap_speed = rig_root_snap_speed();
        let moved = root.t.y - st.root.x;
        let beyond = moved - pl_root_velocity * dt;
        if (abs(beyond) > snap_speed * dt) {
            pl_jump = beyond;
            held -= beyond;
        }
        if (dt > 0.0) {
            pl_root_velocity = clamp(moved / dt, -0.9 * snap_speed, 0.9 * snap_speed);
        }
        pl_start = st.pelvis.x + held;
        let sh = spring(held, st.pelvis.w, 0.0, 0.0, pl_rates.x, frame.pelvis_decay, dt);
        pl_held = vec2<f32>(clamp(sh.x, -rig_max_pelvis_drop(), rig_pelvis_max_rise()), sh.y);
        pl_settle = pl_held.x - held;
    }
}

// Leg l's foot weight blended over this frame (pl_weights) and when its input took its
// value (pl_events; < 0: not known), the range of contact heights its 0/1 flips crossed
// (free_heading.w, motion.w) updated; now and last = the FK contact point's height above
// the held root this frame and last (src/cpu/foot_placement.rs, weigh_foot).
fn weigh_foot(ch: CharacterInput, l: u32, now: f32, last: f32, eps: f32) {
    let goal = clamp(ch.foot_weights[l], 0.0, 1.0);
    if (pl_snap) {
        st.legs[l].free_heading.w = 0.0;
        st.legs[l].motion.w = -1.0;
        pl_weights[l] = goal;
        pl_events[l] = -1.0;
        return;
    }
    let dt = frame.dt;
    let goal0 = st.legs[l].heading.w;
    let told = ch.foot_event_times[l];
    var event = -1.0;
    if (told >= 0.0 && told <= dt) {
        event = told;
    }
    var lo = st.legs[l].free_heading.w;
    var hi = st.legs[l].motion.w;
    let flip = (goal0 <= 0.0 && goal >= 1.0) || (goal0 >= 1.0 && goal <= 0.0);
    // Landing the contact came down across the height, lifting it rose across it.
    var a = last;
    var b = now;
    if (goal >= 1.0) {
        a = now;
        b = last;
    }
    // (A move within eps, the rounding of the world heights, tells nothing; within eps a
    // range still fits.)
    if (flip && b - a > eps) {
        let known = lo <= hi;
        lo = max(lo, a);
        hi = min(hi, b);
        if (!(known && lo <= hi + eps)) {
            lo = a;
            hi = b;
        }
        if (event < 0.0) {
            event = crossed(last, now, 0.5 * (lo + hi), dt);
        }
    }
    st.legs[l].free_heading.w = lo;
    st.legs[l].motion.w = hi;
    pl_events[l] = event;
    let blend_time = rig_weight_blend_time();
    if (!(blend_time > 0.0)) {
        pl_weights[l] = goal;
        return;
    }
    pl_weights[l] = clamp(blend_weight(clamp(st.legs[l].fk.w, 0.0, 1.0), clamp(goal0, 0.0, 1.0), goal, 1.0 / blend_time, dt, event), 0.0, 1.0);
}

// Height above the ground of the lowest point of a foot whose reference joint is at `at`,
// the foot's up axis, toe offset and toe direction (world, as turned) given: heel to tip,
// or the tip less the foot height; with `lead`, of its leading point alone (the tip), for a
// look ahead (src/cpu/foot_placement.rs).
fn foot_gap(leg: SolverLeg, l: u32, at: vec3<f32>, up: vec3<f32>, toe_off: vec3<f32>, toe_dir: vec3<f32>, gp: vec3<f32>, gn: vec3<f32>, lead: bool) -> f32 {
    let h = leg.knee_axis.w;
    if (three_bone(l)) {
        let sole = at - vec3<f32>(0.0, h, 0.0);
        return sole.y - ground_height(gp, gn, sole.x, sole.z);
    }
    if (lead) {
        let tip = sole_ends(at, toe_off, up, h, leg.sole.xy, toe_dir).tip;
        return above(gp, gn, tip);
    }
    return sole_height(gp, gn, at, at + toe_off, up, h, leg.sole.xy, toe_dir);
}

// The unlocked solve's heading `since` seconds before the frame's end: turned back by that
// share of its turn since last frame's heading (`before`, zero: unknown).
fn heading_at(now: vec2<f32>, before: vec2<f32>, since: f32, dt: f32) -> vec2<f32> {
    if (since > 0.0 && dt > 0.0 && any(before != vec2<f32>(0.0)) && any(now != vec2<f32>(0.0))) {
        let r = turn_between(now, before);
        return turn_heading(now, fade_turn(atan2_poly(r.y, r.x), min(since / dt, 1.0)));
    }
    return now;
}

// Starts the release of a locked foot: the offset from the unlocked solve fades out (in the
// places of the locked point and heading).
fn release_foot(l: u32, heading_free: vec2<f32>) {
    let d = st.legs[l].lock.xyz - free[l].contact;
    let r = turn_between(heading_free, st.legs[l].heading.xy);
    st.legs[l].lock = vec4<f32>(d, 0.0);
    st.legs[l].heading.x = atan2_poly(r.y, r.x);
    st.legs[l].heading.y = 0.0;
}

// Feet: per leg the final target and foot turn (src/cpu/foot_placement.rs): the ground
// plane smoothed by springs within the tolerance, swing targets blended by weight, locks.
// Leaves the pelvis goal and reach cap in ground.drop and pl_cap.
var<private> pl_cap: f32;

fn place_feet(base: u32, ch: CharacterInput, root: Root) {
    ground.drop = 0.0;
    pl_cap = -3.40282347e38; // no two-bone leg: no cap
    if (LEGS > 0u) { place_foot(base, ch, root, 0u); }
    if (LEGS > 1u) { place_foot(base, ch, root, 1u); }
    if (LEGS > 2u) { place_foot(base, ch, root, 2u); }
    if (LEGS > 3u) { place_foot(base, ch, root, 3u); }
}

// One leg's FK inputs to this frame's placement stages (src/cpu/foot_placement.rs: LegFrame).
struct LegFrame {
    three: bool,
    ball: bool,
    h: f32,                      // foot height
    w: f32,                      // the blended foot weight
    ankle_rotation: vec4<f32>,
    toe_off: vec3<f32>,          // the toe from the ankle (model space)
    ref_fk: vec3<f32>,           // the reference joint, world, as the FK pose puts it
    contact_fk: vec3<f32>,       // the contact point (the ball for a ball pivot), world
}

// The leg being placed (set by place_foot for each leg in turn): a per-invocation variable,
// like `ground` and `res`, rather than a value passed to every stage.
var<private> pf: LegFrame;

// Where a foot is aimed: its target (world), turn (model space) and ground normal (world).
struct FootAim {
    aim: vec3<f32>,
    turn: vec4<f32>,
    up: vec3<f32>,
    // How far the ground spring holds the target above the real ground (0 below it).
    lag: f32,
}

// How much of a frame's motion of a point happened in its last `since` seconds: its speed
// taken as changing linearly from the frame before's (`before`, negative: unknown) to this
// frame's, within what keeps it forward (the CPU twin's `back_fraction`).
fn back_fraction(since: f32, dt: f32, speed: f32, before: f32) -> f32 {
    if (!(since > 0.0 && dt > 0.0)) {
        return 0.0;
    }
    let r = min(since / dt, 1.0);
    var k = 0.0;
    if (before >= 0.0 && speed > 0.0) {
        k = clamp((speed - before) / speed, -2.0, 2.0);
    }
    return r + 0.5 * k * r * (1.0 - r);
}

// `moved` scaled by the share `f` of it an event backs off; none without an event (after a
// reset `moved` is from whatever the state held).
fn back_along(moved: vec3<f32>, f: f32) -> vec3<f32> {
    if (f > 0.0) {
        return moved * f;
    }
    return vec3<f32>(0.0);
}

// `crossed` for a speed known at three frame ends (s0 < 0: unknown): the crossing on the
// parabola through them, its bend limited to what keeps it monotone over the frame, by
// bisection (the CPU twin's `crossed_curved`).
fn crossed_curved(s0: f32, s1: f32, s2: f32, at: f32, dt: f32) -> f32 {
    if ((s1 - at) * (s2 - at) > 0.0) {
        return crossed(s1, s2, at, dt);
    }
    let d = s2 - s1;
    var a = 0.0;
    if (s0 >= 0.0) {
        a = clamp(0.5 * (s0 - 2.0 * s1 + s2), -abs(d), abs(d));
    }
    let b = d - a;
    let rising = d > 0.0;
    var lo = 0.0;
    var hi = 1.0;
    for (var i = 0u; i < CROSSING_STEPS; i = i + 1u) {
        let mid = 0.5 * (lo + hi);
        if ((s1 + mid * (b + mid * a) < at) == rising) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return (1.0 - 0.5 * (lo + hi)) * dt;
}

// How long before the frame's end a speed moving linearly from s0 to s1 crosses `at` (the
// whole frame when it started past it).
fn crossed(s0: f32, s1: f32, at: f32, dt: f32) -> f32 {
    let span = s1 - s0;
    var c = 0.0;
    if (span != 0.0) {
        c = clamp((at - s0) / span, 0.0, 1.0);
    }
    return (1.0 - c) * dt;
}

// Plant detection's outcome: whether the animation plants the foot, and how long before the
// frame's end the event that changed it happened (0: none known).
struct Plant {
    detected: bool,
    since: f32,
}

// Plant detection: whether the animation plants the foot this frame, by the contact point's
// filtered speed with hysteresis or by its input weight (src/cpu/foot_placement.rs).
fn detect_plant(ch: CharacterInput, l: u32) -> Plant {
    let dt = frame.dt;
    let leg = rig.legs[l];
    let contact_fk = pf.contact_fk;

    var moving = (st.flags & state_bit(STATE_MOTION_SHIFT, l)) != 0u;
    if (pl_snap) {
        st.legs[l].motion = vec4<f32>(0.0, 0.0, 0.0, st.legs[l].motion.w);
        moving = false;
    }
    let mode = leg_plant_detection(leg.mode);
    let was_planted = (st.flags & state_bit(STATE_PLANTED_SHIFT, l)) != 0u;
    var p = Plant(false, 0.0);
    if (mode == PLANT_SPEED) {
        if (!pl_snap && dt > 0.0) {
            // The animation's own motion, without the held snap settling, filtered over a
            // fixed time.
            let v = (contact_fk - st.legs[l].fk.xyz - vec3<f32>(0.0, pl_settle, 0.0)) / dt;
            var before = length(v);
            var vf = v;
            // The filtered speed a frame earlier still (negative: unknown), and this
            // frame's for the next.
            var earlier = -1.0;
            if (moving) {
                let m = st.legs[l].motion.xyz;
                before = length(m);
                vf = v + (m - v) * frame.plant_decay;
                earlier = st.legs[l].free_heading.z;
                st.legs[l].free_heading.z = before;
            } else {
                st.legs[l].free_heading.z = -1.0;
            }
            st.legs[l].motion = vec4<f32>(vf, st.legs[l].motion.w);
            moving = true;
            let speed = length(vf);
            if (was_planted) {
                p.detected = speed <= leg.lock.y;
                if (!p.detected) {
                    p.since = crossed_curved(earlier, before, speed, leg.lock.y, dt);
                }
            } else {
                // (Or the frame's own speed below half the enter speed: a foot that stops
                // dead plants at once.)
                let entering = min(speed, 2.0 * length(v));
                p.detected = entering < leg.lock.x;
                if (p.detected) {
                    p.since = crossed(before, entering, leg.lock.x, dt);
                }
            }
        } else {
            p.detected = was_planted && !pl_snap;
        }
    } else if (mode == PLANT_WEIGHTS) {
        // An input weight reaches 1 (or leaves it) at the moment the caller told or
        // weigh_foot placed, or else at its frame's middle.
        p.detected = ch.foot_weights[l] >= 1.0;
        if (p.detected != (st.legs[l].heading.w >= 1.0) && !pl_snap) {
            p.since = event_time(l, dt);
        }
    }
    let bit = state_bit(STATE_MOTION_SHIFT, l);
    st.flags = select(st.flags & ~bit, st.flags | bit, moving);
    return p;
}

// The foot on the ground: the ground normal and the plane of the sole-placed target each
// follow a spring, never lagging more than the tolerance below the real ground; the target
// blends from the swing target to the ground target by the weight.
fn ground_target(root: Root, l: u32, tolerance: f32) -> FootAim {
    let dt = frame.dt;
    let leg = rig.legs[l];
    let three = pf.three;
    let ball = pf.ball;
    let h = pf.h;
    let w = pf.w;
    let ankle_rotation = pf.ankle_rotation;
    let toe_off = pf.toe_off;
    let ref_fk = pf.ref_fk;
    var turn = Q_IDENTITY;

    let gp = ground.point[l];
    let gn = ground.normal[l];
    // A ground spring with no memory (reset, or no ground last frame) starts at rest.
    let fresh = pl_snap || !(st.legs[l].plane.y > 0.0);
    var n = gn;
    var nv = vec3<f32>(0.0);
    if (!fresh) {
        let g0 = st.legs[l].plane_goal;
        let sx = spring(st.legs[l].plane.x, st.legs[l].plane_velocity.x, g0.x, gn.x, pl_rates.y, frame.ground_decay, dt);
        let sy = spring(st.legs[l].plane.y, st.legs[l].plane_velocity.y, g0.y, gn.y, pl_rates.y, frame.ground_decay, dt);
        let sz = spring(st.legs[l].plane.z, st.legs[l].plane_velocity.z, g0.z, gn.z, pl_rates.y, frame.ground_decay, dt);
        n = vec3<f32>(sx.x, sy.x, sz.x);
        nv = vec3<f32>(sx.y, sy.y, sz.y);
    }
    var nf = normalize_or(n, gn, 1e-12);
    if (!(nf.y > MIN_GROUND_NORMAL_Y)) {
        n = gn;
        nv = vec3<f32>(0.0);
        nf = gn;
    }
    // roll: how much higher the foot's own pitch and roll put the target than a flat
    // foot's (KeepRoll); the ground spring smooths the flat foot's height, the roll is
    // added after (src/cpu/foot_placement.rs).
    var roll = 0.0;
    var raw: vec3<f32>;
    if (three) {
        raw = gp + nf * h;
    } else {
        let normal_ms = normalize(dir_to_model(root, nf));
        var t: FootTurn;
        if (ball) {
            t = align_up(leg, model_up(root), normal_ms);
        } else {
            t = align_foot(leg, ankle_rotation, normal_ms, model_up(root));
        }
        turn = t.q;
        ground.limited[l] = t.limited;
        let up_ms = quat_rotate(ankle_rotation, leg.foot_up.xyz);
        raw = sole_target(root, gp, nf, t.q, up_ms, toe_off, h, leg.sole.xy, legs_fk[l].toe_dir);
        if (keeps_roll(leg) && !ball) {
            let flat = align_up(leg, up_ms, normal_ms);
            // Measured on the smoothed plane: the spring smooths the rest.
            let toe_dir = legs_fk[l].toe_dir;
            roll = plane_sole_gap(root, nf, flat.q, up_ms, toe_off, h, leg.sole.xy, toe_dir)
                - plane_sole_gap(root, nf, t.q, up_ms, toe_off, h, leg.sole.xy, toe_dir);
        }
    }
    // The ground height under the target: the smoothed plane carried to this frame's
    // target, then its spring toward the real ground, within the tolerance.
    var y = raw.y - roll;
    var yv = 0.0;
    if (!fresh) {
        let dx = raw.x - st.legs[l].lift.z;
        let dz = raw.z - st.legs[l].lift.w;
        let carry = (nf.x * dx + nf.z * dz) / nf.y;
        let carried = st.legs[l].plane.w - carry;
        let goal0 = st.legs[l].plane_goal.w - carry;
        let sy = spring(carried, st.legs[l].plane_velocity.w, goal0, raw.y - roll, pl_rates.y, frame.ground_decay, dt);
        y = sy.x;
        yv = sy.y;
    }
    st.legs[l].plane = vec4<f32>(n, y);
    st.legs[l].plane_velocity = vec4<f32>(nv, yv);
    // The spring runs free; the output stays within the tolerance of the ground.
    y = max(y, raw.y - roll - tolerance) + roll;
    let lag = max(y - raw.y, 0.0);
    st.legs[l].plane_goal = vec4<f32>(gn, raw.y - roll);
    st.legs[l].lift.z = raw.x;
    st.legs[l].lift.w = raw.z;
    // From the swing target (the FK foot, where a root snap left it) to the ground.
    return FootAim(mix(ref_fk, vec3<f32>(raw.x, y, raw.z), w), nlerp_identity(turn, w), nf, lag);
}

// The lock's outcome: the aim, whether the foot is locked, what is left of a release.
struct FootLock {
    a: FootAim,
    locked: bool,
    fading: f32,
    heel: bool, // a sole pivot holds the heel (else the ball)
}

// Whether leg l's sole pivot holds the heel, the foot's heel and ball standing at heel_at and
// ball_at (world; `ends` its heel and ball from the ankle): the end held until now (`held`),
// unless the other is nearer the ground under it by more than the margin (lower along the
// ground normal `up` where the leg found no ground): the end on the ground, not merely the
// lower one (a foot across a step edge tilts its heel into the air over the lower step).
fn holds_heel(l: u32, held: bool, heel_at: vec3<f32>, ball_at: vec3<f32>, up: vec3<f32>, ends: array<vec3<f32>, 2>) -> bool {
    let margin = SOLE_PIVOT_MARGIN * distance(ends[1], ends[0]);
    var rise = dot(ball_at - heel_at, up);
    if (ground.hit[l]) {
        rise = above(ground.point[l], ground.normal[l], ball_at) - above(ground.point[l], ground.normal[l], heel_at);
    }
    return select(rise > margin, rise >= -margin, held);
}

// Where leg l's lock holds the contact point: its place on the ground, at the unlocked
// solve's height (contact_free) carried along the ground plane (normal up) to it, so a lock
// taken while the weight still blends in neither floats nor sinks; and the turn from the
// unlocked heading to the locked one.
struct Held {
    c: vec3<f32>,
    r: vec2<f32>,
}

fn held_contact(l: u32, contact_free: vec3<f32>, up: vec3<f32>, heading_free: vec2<f32>) -> Held {
    var c = st.legs[l].lock.xyz;
    c.y = contact_free.y - (up.x * (c.x - contact_free.x) + up.z * (c.z - contact_free.z)) / up.y;
    return Held(c, turn_between(heading_free, st.legs[l].heading.xy));
}

// The lock: contact point and heading of the unlocked solve, then held (a planted foot) or
// blended back (a released one).
fn lock_foot(root: Root, l: u32, a: FootAim, planted: bool, since: f32) -> FootLock {
    let dt = frame.dt;
    let leg = rig.legs[l];
    let three = pf.three;
    let ball = pf.ball;
    let toe_off = pf.toe_off;
    var aim = a.aim;
    var turn = a.turn;
    let up = a.up;

    // A sole pivot's two points, heel and ball of the foot as turned (from the ankle,
    // world).
    let sole = sole_pivot(l);
    var heel = (st.flags & state_bit(STATE_HEEL_SHIFT, l)) != 0u;
    var ends = array<vec3<f32>, 2>(vec3<f32>(0.0), vec3<f32>(0.0));
    if (sole) {
        let up_ms = quat_rotate(pf.ankle_rotation, leg.foot_up.xyz);
        let s = turned_sole(root, vec3<f32>(0.0), turn, up_ms, toe_off, pf.h, leg.sole.xy, legs_fk[l].toe_dir);
        ends = array<vec3<f32>, 2>(s.heel, s.ball);
    }
    // The lock: contact point and heading of the unlocked solve, then held or blended.
    var offset = ends[select(1u, 0u, heel)];
    if (ball) {
        offset = dir_to_world(root, quat_rotate(turn, toe_off)) * root.s;
    }
    var heading_free = vec2<f32>(0.0);
    if (!three) {
        heading_free = heading(dir_to_world(root, quat_rotate(turn, toe_off)));
    }
    var contact_free = aim + offset;
    free[l].contact = contact_free;
    free[l].heading = heading_free;
    free[l].hip = to_world(root, legs_fk[l].hip);
    var locked = (st.flags & state_bit(STATE_LOCKED_SHIFT, l)) != 0u && !pl_snap;
    if (pl_snap) {
        st.legs[l].lock = vec4<f32>(0.0);
        st.legs[l].heading.x = 0.0;
        st.legs[l].heading.y = 0.0;
    }
    let release_distance = leg.lock.z;
    let release_time = leg.lock.w;
    // An event `since` seconds before the frame's end: the unlocked solve's contact point's
    // horizontal motion since (not the animated ankle's: a foot rolling about its ball).
    let moved3 = contact_free - st.legs[l].free.xyz;
    let moved = vec3<f32>(moved3.x, 0.0, moved3.z);
    var speed = 0.0;
    if (dt > 0.0) {
        speed = length(moved) / dt;
    }
    let before_speed = st.legs[l].free.w;
    var back = back_along(moved, back_fraction(since, dt, speed, before_speed));
    let heading_before = st.legs[l].free_heading.xy;
    let was_locked = locked;
    if (locked) {
        let dl = st.legs[l].lock.xyz - contact_free;
        let far = dl.x * dl.x + dl.z * dl.z > release_distance * release_distance;
        if (!planted || far) {
            var since = since;
            if (far && dt > 0.0) {
                // Released when the foot went past the release distance, inside the frame.
                let before = length(vec2<f32>(dl.x + moved.x, dl.z + moved.z));
                since = max(since, crossed(before, length(vec2<f32>(dl.x, dl.z)), release_distance, dt));
                back = back_along(moved, back_fraction(since, dt, speed, before_speed));
            }
            // The lock's height as this frame carries it (less what it settled last frame).
            st.legs[l].lock.y = contact_free.y - (up.x * dl.x + up.z * dl.z) / up.y - st.legs[l].lock.w;
            release_foot(l, heading_at(heading_free, heading_before, since, dt));
            // Released at the event: the offset the foot had then, fading since.
            st.legs[l].lock = vec4<f32>(st.legs[l].lock.xyz + back, since);
            locked = false;
        }
    }
    // What is left of the last release (all of it just after one) and its heading turn:
    // a new lock starts from them, an unlocked foot blends back with them.
    let left = remaining(st.legs[l].lock.w, release_time);
    let left_turn = fade_turn(st.legs[l].heading.x, left);
    // A sole pivot's end, decided once a frame where the foot stands: a lock held from last
    // frame passes to the other end of the sole (where this frame's foot, about the end
    // held, has it) when the foot rolls through flat; an unlocked foot with no release fading
    // follows the end on the ground, and a new lock holds that end.
    var pass_on = false;
    var other = vec3<f32>(0.0);
    // A lock held from last frame: where it holds the contact, found once for the pivot's
    // decision and the lock below (nothing moves either in between).
    var held = Held(vec3<f32>(0.0), vec2<f32>(1.0, 0.0));
    if (locked) {
        held = held_contact(l, contact_free, up, heading_free);
    }
    if (sole) {
        var heel_at = aim + ends[0];
        var ball_at = aim + ends[1];
        if (locked) {
            other = held.c + quat_rotate(quat_from_axis_cos_sin(up, held.r.x, held.r.y), ends[select(0u, 1u, heel)] - offset);
            heel_at = select(other, held.c, heel);
            ball_at = select(held.c, other, heel);
        }
        if (heel != holds_heel(l, heel, heel_at, ball_at, up, ends)) {
            if (locked) {
                pass_on = true;
            } else if (!(left > 0.0)) {
                heel = !heel;
                offset = ends[select(1u, 0u, heel)];
                contact_free = aim + offset;
                free[l].contact = contact_free;
            }
        }
    }
    if (!was_locked && planted) {
        let lock_heading = turn_heading(heading_at(heading_free, heading_before, since, dt), left_turn);
        // Planted at the event: the contact where the animation had it then.
        let contact = contact_free - back + st.legs[l].lock.xyz * left;
        st.legs[l].lock = vec4<f32>(contact, 0.0);
        st.legs[l].heading.x = lock_heading.x;
        st.legs[l].heading.y = lock_heading.y;
        locked = true;
        held = held_contact(l, contact_free, up, heading_free);
    }
    var contact: vec3<f32>;
    var r: vec2<f32>;
    var fading = 0.0; // what is left of a release
    if (locked) {
        // The lock holds the contact's place on the ground and its heading.
        contact = held.c;
        r = held.r;
        if (pass_on) {
            // The foot rolled through flat: the lock passes to the other end of the sole.
            contact = other;
            heel = !heel;
            offset = ends[select(1u, 0u, heel)];
            contact_free = aim + offset;
            free[l].contact = contact_free;
            st.legs[l].lock.x = contact.x;
            st.legs[l].lock.z = contact.z;
        }
        st.legs[l].lock.y = contact.y;
        st.legs[l].lock.w = 0.0; // settled below the carried height by lift_foot
    } else {
        fading = left;
        st.legs[l].lock.w = min(st.legs[l].lock.w + dt, max(release_time, 0.0));
        contact = contact_free + st.legs[l].lock.xyz * fading;
        r = left_turn;
    }
    aim = contact - offset;
    if (!three && (heading_free.x != 0.0 || heading_free.y != 0.0) && !(r.x == 1.0 && r.y == 0.0)) {
        // The heading held: the foot turned about the ground normal.
        let spin_ws = quat_from_axis_cos_sin(up, r.x, r.y);
        aim = contact - quat_rotate(spin_ws, offset);
        turn = quat_mul(quat_from_axis_cos_sin(dir_to_model(root, up), r.x, r.y * root.m), turn);
    }
    var next_speed = speed;
    if (pl_snap || !(dt > 0.0)) {
        next_speed = -1.0;
    }
    st.legs[l].free = vec4<f32>(free[l].contact, next_speed);
    var h = heading_free;
    if (next_speed < 0.0) {
        h = vec2<f32>(0.0);
    }
    var earlier = st.legs[l].free_heading.z;
    if (pl_snap) {
        earlier = -1.0;
    }
    st.legs[l].free_heading = vec4<f32>(h, earlier, st.legs[l].free_heading.w);
    return FootLock(FootAim(aim, turn, up, a.lag), locked, fading, heel);
}

// No part of the foot more than the tolerance below the ground: a swinging or blending foot
// is lifted, smoothly, and early where the ground rises ahead; a locked foot at full weight
// settles onto the ground under it. Returns the target.
fn lift_foot(root: Root, ch: CharacterInput, l: u32, a: FootAim, locked: bool, fading: f32, tolerance: f32) -> vec3<f32> {
    let dt = frame.dt;
    let leg = rig.legs[l];
    let w = pf.w;
    let ankle_rotation = pf.ankle_rotation;
    let toe_off = pf.toe_off;
    let contact_fk = pf.contact_fk;
    var aim = a.aim;
    let turn = a.turn;

    // No part of the foot more than the tolerance below the ground: a swinging or
    // blending foot is lifted, smoothly, and early where the ground rises ahead.
    let up_ms = quat_rotate(ankle_rotation, leg.foot_up.xyz);
    let gp = ground.point[l];
    let gn = ground.normal[l];
    // The foot as turned, in world space: its up axis, the toe from the ankle and the toe's
    // direction past the ball.
    let foot_up = dir_to_world(root, quat_rotate(turn, up_ms));
    let foot_toe = dir_to_world(root, quat_rotate(turn, toe_off)) * root.s;
    let foot_dir = toe_dir_ws(root, turn, legs_fk[l].toe_dir);
    // A foot on its ground target (full weight, not locked, no release fading) is on
    // the ground by construction: nothing to measure.
    let grounded = w >= 1.0 && !locked && fading == 0.0;
    var gap = 0.0;
    if (!grounded) {
        gap = foot_gap(leg, l, aim, foot_up, foot_toe, foot_dir, gp, gn, false);
    }
    let need = max(-gap - tolerance, 0.0);
    // A swinging (not planted, not locked) foot looks ahead along its FK motion.
    var need_ahead = 0.0;
    if (!pl_snap && !locked && w < 1.0 && dt > 0.0) {
        let velocity = (contact_fk - st.legs[l].fk.xyz) / dt;
        let ahead = aim + vec3<f32>(velocity.x, 0.0, velocity.z) * rig_swing_lookahead();
        // The leading point (the ball, or a hoof tip's sole) alone: a look ahead.
        let gap = foot_gap(leg, l, ahead, foot_up, foot_toe, foot_dir, gp, gn, true);
        // Only while the animation swings the foot: a foot it plants looks no further.
        need_ahead = max(-gap - tolerance, 0.0) * (1.0 - max(w, clamp(ch.foot_weights[l], 0.0, 1.0)));
    }
    let lift_goal = max(need, need_ahead);
    var lift = vec2<f32>(lift_goal, 0.0);
    if (!pl_snap) {
        lift = spring(st.legs[l].lift.x, st.legs[l].lift.y, st.legs[l].heading.z, lift_goal, pl_rates.y, frame.ground_decay, dt);
    }
    st.legs[l].heading.z = lift_goal;
    st.legs[l].lift.x = lift.x;
    st.legs[l].lift.y = lift.y;
    // The lift keeps the swing target clear and fades as the weight blends it onto the
    // ground; once the animation plants the foot, no higher than this frame's goal.
    let held = lift.x + (min(lift.x, lift_goal) - lift.x) * clamp(ch.foot_weights[l], 0.0, 1.0);
    aim.y += max(held * (1.0 - w), need);
    if (locked && w >= 1.0) {
        // A locked foot settles onto the ground under it: the ground spring's lag, then
        // what is left, each all of it up to a bound and less beyond, down to the
        // tolerance (src/cpu/foot_placement.rs).
        let tolerance = rig_ground_tolerance();
        let spring_lag = clamp(gap, 0.0, a.lag);
        let rest = gap - spring_lag;
        let settle = min(spring_lag, max(tolerance, 9.0 * tolerance - a.lag))
            + clamp(rest, 0.0, max(tolerance, 10.0 * tolerance - rest));
        aim.y -= settle;
        st.legs[l].lock.y -= settle;
        st.legs[l].lock.w = settle;
    }
    return aim;
}

// No ground under the foot: its ground springs forget it.
fn forget_ground(l: u32) {

    st.legs[l].plane = vec4<f32>(0.0);
    st.legs[l].plane_velocity = vec4<f32>(0.0);
    st.legs[l].plane_goal = vec4<f32>(0.0);
    st.legs[l].lift = vec4<f32>(0.0);
    st.legs[l].heading.z = 0.0;
}

// place_feet for leg l, in stages: detect_plant, ground_target, lock_foot, lift_foot.
fn place_foot(base: u32, ch: CharacterInput, root: Root, l: u32) {
    let leg = rig.legs[l];
    let three = three_bone(l);
    let ball = !three && ball_pivot(l);
    let ref_fk = to_world(root, reference_fk(l));
    var contact_fk = ref_fk;
    if (ball) {
        contact_fk = to_world(root, legs_fk[l].toe);
    }
    // The FK contact's height above the held root, this frame and last.
    let now = contact_fk.y - root.t.y;
    let last = st.legs[l].fk.y - (st.root.x + st.pelvis.z);
    let eps = 8.0 * F32_EPSILON * abs(root.t.y) + 64.0 * F32_EPSILON * (abs(now) + abs(last) + root.s);
    weigh_foot(ch, l, now, last, eps);
    let w = pl_weights[l];
    pf = LegFrame(three, ball, leg.knee_axis.w, w, legs_fk[l].ankle_rotation, legs_fk[l].toe - legs_fk[l].ankle, ref_fk, contact_fk);
    let plant = detect_plant(ch, l);
    let detected = plant.detected;
    let planted = detected && ground.hit[l] && ch.foot_weights[l] > 0.0;
    // A foot lifted by its input weight going to 0 this frame: lifted at the moment the
    // caller told or weigh_foot placed, or else in the frame's middle.
    var since = plant.since;
    if (!(ch.foot_weights[l] > 0.0) && st.legs[l].heading.w > 0.0 && !pl_snap) {
        since = event_time(l, frame.dt);
    }
    // A swinging foot may lag the tolerance below the ground; a planted one stands on it.
    var tolerance = rig_ground_tolerance();
    if (planted) {
        tolerance = 0.0;
    }
    var a = FootAim(ref_fk, Q_IDENTITY, vec3<f32>(0.0, 1.0, 0.0), 0.0);
    if (ground.hit[l]) {
        a = ground_target(root, l, tolerance);
    }
    // A lock let go while the foot stayed planted is not taken again before its release
    // has faded.
    let was_locked = (st.flags & state_bit(STATE_LOCKED_SHIFT, l)) != 0u;
    let released = (st.flags & state_bit(STATE_RELEASED_SHIFT, l)) != 0u && planted && !pl_snap;
    let may_lock = planted && !(released && remaining(st.legs[l].lock.w, rig.legs[l].lock.w) > 0.0);
    let lk = lock_foot(root, l, a, may_lock, since);
    let locked = lk.locked;
    let turn = lk.a.turn;
    var aim = lk.a.aim;
    if (ground.hit[l]) {
        aim = lift_foot(root, ch, l, lk.a, locked, lk.fading, tolerance);
    } else {
        forget_ground(l);
    }

    st.legs[l].fk = vec4<f32>(contact_fk, w);
    var flags = st.flags
        & ~(state_bit(STATE_LOCKED_SHIFT, l) | state_bit(STATE_PLANTED_SHIFT, l) | state_bit(STATE_RELEASED_SHIFT, l)
            | state_bit(STATE_HEEL_SHIFT, l));
    if (lk.heel) {
        flags = flags | state_bit(STATE_HEEL_SHIFT, l);
    }
    if (locked) {
        flags = flags | state_bit(STATE_LOCKED_SHIFT, l);
    } else if (planted && !pl_snap && (released || was_locked)) {
        flags = flags | state_bit(STATE_RELEASED_SHIFT, l);
    }
    if (detected) {
        flags = flags | state_bit(STATE_PLANTED_SHIFT, l);
    }
    st.flags = flags;
    st.legs[l].heading.w = clamp(ch.foot_weights[l], 0.0, 1.0);
    ground.aim[l] = aim;
    ground.turn[l] = turn;
    ground.aimed[l] = true;
    var need = ref_fk.y - aim.y;
    if (!three) {
        free[l].reach = leg_reach(l, leg, root.s);
        // A locked leg within max_reach of its reach (what keeps its lock), any other within
        // its reach.
        var within = free[l].reach;
        if (locked) {
            within = within * rig_max_reach();
        }
        let reach = reach_drop(within, free[l].hip, aim);
        need = max(need, reach);
        pl_cap = max(pl_cap, reach);
    }
    ground.drop = max(ground.drop, need);
}

// Pelvis: the offset's spring toward this frame's stateless drop (relative to the character
// held where a root snap left it); with the snap held within [-max drop, max rise] of FK and
// low enough for every leg to reach; the whole output at most the max speed unless those
// bounds need more (flagged). The state keeps the output (src/cpu/foot_placement.rs).
fn spring_pelvis(root: Root) -> vec3<f32> {
    let max_speed = rig_pelvis_max_speed();
    let max_rise = rig_pelvis_max_rise();
    let max_drop = rig_max_pelvis_drop();
    let dt = frame.dt;
    let goal = -clamp(ground.drop, 0.0, max_drop);
    let lo = -max_drop - pl_held.x;
    let hi = max(min(max_rise - pl_held.x, -pl_cap), lo);
    let step = max_speed * dt;
    var o = goal;
    var v = 0.0;
    if (!pl_snap) {
        let sx = spring(st.pelvis.x, st.pelvis.y, st.root.y, goal, pl_rates.x, frame.pelvis_decay, dt);
        v = clamp(sx.y, -max_speed, max_speed);
        // The whole offset (spring and held snap) moves at most max_speed.
        o = clamp(sx.x + pl_held.x, pl_start - step, pl_start + step) - pl_held.x;
    }
    // The bounds win: a leg reaches its target (flagged where that is faster).
    let bounded = clamp(o, lo, hi);
    let offset = bounded + pl_held.x;
    if (!pl_snap && bounded != o && !(offset >= pl_start - step && offset <= pl_start + step)) {
        for (var l = 0u; l < LEGS; l++) {
            res.status[l] = res.status[l] | FOOT_PELVIS_FAST;
        }
    }
    // The state keeps what was output.
    st.pelvis = vec4<f32>(offset - pl_held.x, v, pl_held.x, pl_held.y);
    st.root = vec2<f32>(root.t.y, goal);
    st.root_velocity = pl_root_velocity;
    res.pelvis.x = -offset;
    res.pelvis.y = -goal;
    res.pelvis.z = pl_jump;
    return dir_to_model(root, vec3<f32>(0.0, offset, 0.0)) / root.s;
}

// End: a locked two-bone leg stretched past max_reach of its reach is released (from the
// next frame); status bits; the state marked valid.
fn end_placement() {
    if (LEGS > 0u) { end_foot(0u); }
    if (LEGS > 1u) { end_foot(1u); }
    if (LEGS > 2u) { end_foot(2u); }
    if (LEGS > 3u) { end_foot(3u); }
    st.flags = st.flags | STATE_VALID;
    store_state();
}

// end_placement for leg l.
fn end_foot(l: u32) {
    var flags = st.flags;
    if ((flags & state_bit(STATE_LOCKED_SHIFT, l)) != 0u && !three_bone(l)) {
        // The hip lowered by the pelvis offset within its limits (the held snap is in the
        // hip already).
        let hip_ws = free[l].hip + vec3<f32>(0.0, -res.pelvis.x - pl_held.x, 0.0);
        // (With a margin of 1e-4 of the reach: a pelvis at its reach cap is no release.)
        if (length(ground.aim[l] - hip_ws) > free[l].reach * (rig_max_reach() + 1e-4)) {
            release_foot(l, free[l].heading);
            flags = flags & ~state_bit(STATE_LOCKED_SHIFT, l);
            if ((flags & state_bit(STATE_PLANTED_SHIFT, l)) != 0u) {
                flags = flags | state_bit(STATE_RELEASED_SHIFT, l);
            }
        }
    }
    if ((flags & state_bit(STATE_LOCKED_SHIFT, l)) != 0u) {
        res.status[l] = res.status[l] | FOOT_LOCKED;
    }
    if (pl_snap) {
        res.status[l] = res.status[l] | FOOT_RESET;
    }
    st.flags = flags;
}
