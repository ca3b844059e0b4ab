//! Finding a character's legs in its skeleton: by joint names in the common conventions,
//! by the skeleton's shape where the names say nothing, or from an explicit mapping, with
//! an error that names the joint and what is wrong.
//!
//! Names are read case- and separator-insensitively, with namespace and deform prefixes
//! dropped (`mixamorig:`, `Armature|`, `DEF-`, `ORG-`, `J_Bip_`, `b_`, joint numbers such as
//! `_015`) and the side read from a `Left`/`Right` prefix or an `L`/`R` part
//! (`thigh_l`, `Shin.L`, `L_Foot`). Conventions covered:
//!
//! | convention | pelvis | hip | knee | ankle | toe |
//! |---|---|---|---|---|---|
//! | Mixamo, CMU BVH | `Hips` | `LeftUpLeg` | `LeftLeg` | `LeftFoot` | `LeftToeBase` |
//! | Unreal mannequin | `pelvis` | `thigh_l` | `calf_l` | `foot_l` | `ball_l` |
//! | Unity / VRM humanoid | `Hips` | `LeftUpperLeg` | `LeftLowerLeg` | `LeftFoot` | `LeftToes` |
//! | Blender / Rigify | `hips`, `pelvis`, `spine` | `thigh.L` | `shin.L` | `foot.L` | `toe.L` |
//! | quadruped hind legs (glTF Fox) | `Hip` | `LeftLeg01` | `LeftLeg02` | `LeftFoot01` | `LeftFoot02` |
//! | quadruped front legs (glTF Fox) | | `LeftUpperArm` | `LeftForeArm` | `LeftHand` | the wrist |
//!
//! Front legs named as arms are legs only where their wrists stand on the floor in the rest
//! pose (a quadruped's; a biped's hands never do); a front leg without a toe joint is a
//! two-bone leg with a point foot, its wrist given as both ankle and toe.
//!
//! Where names do not find two legs, the shape does: the lowest leaf chains of the rest pose
//! (two, or four for a quadruped), each read up from its lowest joint, meeting at the pelvis.

use glam::Vec3;

use super::records::JointPose;
use crate::error::IkError;

/// Which side of the character a leg is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Left.
    Left,
    /// Right.
    Right,
}

impl Side {
    fn word(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }
}

/// What [`find_legs`] found: the pelvis and, per leg, `[hip, knee, ankle, toe]`.
#[derive(Clone, Debug, PartialEq)]
pub struct FoundLegs {
    /// The pelvis joint.
    pub pelvis: usize,
    /// Each leg's joints: the two legs named as legs (or found by shape), left first; then a
    /// quadruped's front legs named as arms, left first (their wrist both ankle and toe).
    pub legs: Vec<[usize; 4]>,
    /// `true` when the legs came from the skeleton's shape rather than its names.
    pub by_shape: bool,
}

impl FoundLegs {
    /// The legs with the kinds a quadruped's rig gives them: of four legs, the two whose
    /// hips are furthest back along `forward` (model space, in `rest`) pseudo three-bone
    /// (blend 0.5: the hock follows the stifle halfway, as a digitigrade leg does) and the
    /// front ones two-bone; two legs found are both hind. What
    /// `GltfSkeleton::quadruped_rig` builds its rig from.
    #[must_use]
    pub fn quadruped(&self, rest: &[JointPose], forward: Vec3) -> Vec<([usize; 4], super::LegKind)> {
        let back = |l: &[usize; 4]| rest.get(l[0]).map_or(0.0, |p| p.position().dot(forward));
        let mut order: Vec<usize> = (0..self.legs.len()).collect();
        order.sort_by(|&a, &b| back(&self.legs[a]).total_cmp(&back(&self.legs[b])));
        let hind = if self.legs.len() == 4 { &order[..2] } else { &order[..] };
        self.legs
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let kind = if hind.contains(&i) {
                    super::LegKind::PseudoThreeBone { blend: 0.5 }
                } else {
                    super::LegKind::TwoBone
                };
                (*l, kind)
            })
            .collect()
    }
}

/// A joint name split into its side and its core word (lower case, no separators, no
/// prefixes or joint numbers): `mixamorig:LeftUpLeg` → `(Some(Left), "upleg")`,
/// `DEF-thigh.L` → `(Some(Left), "thigh")`, `b_LeftLeg01_015` → `(Some(Left), "leg01")`.
#[must_use]
pub fn split_name(name: &str) -> (Option<Side>, String) {
    // Namespaces: everything up to the last ':' or '|'.
    let name = name.rsplit([':', '|']).next().unwrap_or(name);
    let mut side = None;
    let mut core = String::new();
    for token in name.split(['_', '.', '-', ' ']).filter(|t| !t.is_empty()) {
        let lower = token.to_ascii_lowercase();
        match lower.as_str() {
            "l" | "left" => side = Some(Side::Left),
            "r" | "right" => side = Some(Side::Right),
            "def" | "org" | "mch" | "j" | "bip" | "bip01" | "b" | "c" | "bone" | "jnt" | "mixamorig" => {}
            t if t.chars().all(|c| c.is_ascii_digit()) && !core.is_empty() => {} // a joint number
            t => {
                let t = if let Some(rest) = t.strip_prefix("left").filter(|r| !r.is_empty()) {
                    side = Some(Side::Left);
                    rest
                } else if let Some(rest) = t.strip_prefix("right").filter(|r| !r.is_empty()) {
                    side = Some(Side::Right);
                    rest
                } else {
                    t
                };
                core.push_str(t);
            }
        }
    }
    (side, core)
}

/// Core words of each leg joint, most specific first.
const HIP: &[&str] = &["upleg", "upperleg", "thigh", "femur", "leg01", "hip"];
const KNEE: &[&str] = &["leg", "lowerleg", "calf", "shin", "knee", "leg02"];
const ANKLE: &[&str] = &["foot", "ankle", "foot01"];
const TOE: &[&str] = &["toebase", "toes", "toe", "ball", "foot02", "toe01"];
const PELVIS: &[&str] = &["hips", "pelvis", "hip", "hip01", "spine"];
/// Core words of a quadruped's front-leg joints, named as arms (the glTF Fox's
/// `b_LeftUpperArm_09`, `b_LeftForeArm_010`, `b_LeftHand_011`).
const SHOULDER: &[&str] = &["upperarm", "arm", "humerus"];
const ELBOW: &[&str] = &["forearm", "lowerarm", "elbow"];
const WRIST: &[&str] = &["hand", "wrist", "paw", "frontfoot"];

/// The legs of a skeleton: by names (see the module docs) or, failing that, by shape.
/// `parents` come first; `rest` is the rest pose in model space with `up` its up axis.
///
/// # Errors
/// [`IkError::InvalidRig`] naming the joint and what is wrong: a leg joint whose named
/// parent joint is not above it in the hierarchy (e.g. a foot hung from an IK helper bone
/// rather than the shin), a leg that misses a joint, or a skeleton where neither names nor
/// shape find legs.
pub fn find_legs(
    names: &[String],
    parents: &[Option<usize>],
    rest: &[JointPose],
    up: Vec3,
) -> Result<FoundLegs, IkError> {
    let split: Vec<(Option<Side>, String)> = names.iter().map(|n| split_name(n)).collect();
    let find = |side: Option<Side>, words: &[&str]| -> Option<usize> {
        words.iter().find_map(|w| split.iter().position(|(s, c)| *s == side && c == w))
    };
    let named_sides: Vec<[Option<usize>; 4]> = [Side::Left, Side::Right]
        .iter()
        .map(|&s| [find(Some(s), HIP), find(Some(s), KNEE), find(Some(s), ANKLE), find(Some(s), TOE)])
        .collect();
    let any_named = named_sides.iter().flatten().any(Option::is_some);
    if any_named {
        let mut legs = Vec::new();
        for (side, joints) in [Side::Left, Side::Right].iter().zip(&named_sides) {
            let role = ["hip", "knee", "ankle", "toe"];
            let mut leg = [0; 4];
            for k in 0..4 {
                leg[k] = joints[k].ok_or_else(|| {
                    let have: Vec<&str> = (0..4).filter_map(|i| joints[i].map(|j| names[j].as_str())).collect();
                    IkError::InvalidRig(format!(
                        "the {} leg has no {} joint (found {have:?}; names tried: {:?})",
                        side.word(),
                        role[k],
                        [HIP, KNEE, ANKLE, TOE][k]
                    ))
                })?;
                if k > 0 && !descends(parents, leg[k], leg[k - 1]) {
                    return Err(IkError::InvalidRig(format!(
                        "the {} {} {:?} is not below the {} {:?} in the hierarchy (its parents: {}); \
                         a foot hung from an IK helper bone rather than the shin cannot be solved: \
                         export the deform skeleton",
                        side.word(),
                        role[k],
                        names[leg[k]],
                        role[k - 1],
                        names[leg[k - 1]],
                        ancestry(names, parents, leg[k])
                    )));
                }
            }
            legs.push(leg);
        }
        let pelvis = common_ancestor(parents, legs[0][0], legs[1][0])
            .map(|a| {
                // A named pelvis on the way up from the legs wins over their meeting point.
                let mut at = Some(a);
                while let Some(j) = at {
                    if split[j].0.is_none() && PELVIS.contains(&split[j].1.as_str()) {
                        return j;
                    }
                    at = parents[j];
                }
                a
            })
            .ok_or_else(|| IkError::InvalidRig("the two legs have no joint above both (no pelvis)".into()))?;
        legs.extend(front_legs(find, parents, rest, up, &legs));
        return Ok(FoundLegs { pelvis, legs, by_shape: false });
    }
    by_shape(names, parents, rest, up)
}

/// A quadruped's front legs named as arms (shoulder, elbow, wrist on each side, each below
/// the one before) whose wrists stand on the floor in the rest pose (within a quarter of the
/// hind legs' height of their lowest ankle: a biped's hands never do), left first. Each is
/// a two-bone leg with a point foot, its wrist given as both ankle and toe
/// ([`crate::crowd::LegRig::joints`]). None unless both sides are found.
fn front_legs(
    find: impl Fn(Option<Side>, &[&str]) -> Option<usize>,
    parents: &[Option<usize>],
    rest: &[JointPose],
    up: Vec3,
    hind: &[[usize; 4]],
) -> Vec<[usize; 4]> {
    let height = |j: usize| rest.get(j).map_or(f32::NAN, |p| p.position().dot(up));
    let floor = hind.iter().map(|l| height(l[2])).fold(f32::INFINITY, f32::min);
    let tall = hind.iter().map(|l| height(l[0]) - height(l[2])).fold(0.0_f32, f32::max);
    let mut legs = Vec::new();
    for side in [Side::Left, Side::Right] {
        let [Some(a), Some(b), Some(c)] = [SHOULDER, ELBOW, WRIST].map(|w| find(Some(side), w)) else {
            return Vec::new();
        };
        let chained = descends(parents, b, a) && descends(parents, c, b) && a != b && b != c;
        if !chained || !(height(c) <= floor + 0.25 * tall) || hind.iter().any(|l| l.contains(&a)) {
            return Vec::new();
        }
        legs.push([a, b, c, c]);
    }
    legs
}

/// Legs from the shape: the lowest leaves of the rest pose, each read up four joints.
fn by_shape(names: &[String], parents: &[Option<usize>], rest: &[JointPose], up: Vec3) -> Result<FoundLegs, IkError> {
    let n = parents.len();
    let mut has_child = vec![false; n];
    for p in parents.iter().flatten() {
        has_child[*p] = true;
    }
    let height = |j: usize| rest[j].position().dot(up);
    let mut leaves: Vec<usize> = (0..n).filter(|&j| !has_child[j] && depth(parents, j) >= 4).collect();
    leaves.sort_by(|&a, &b| height(a).total_cmp(&height(b)));
    // The lowest leaf, and every leaf as low as it within a tenth of the character's height.
    let top = (0..n).map(height).fold(f32::NEG_INFINITY, f32::max);
    let Some(&lowest) = leaves.first() else {
        return Err(IkError::InvalidRig("no joint chain of four or more joints: no legs to find".into()));
    };
    let reach = 0.1 * (top - height(lowest));
    let feet: Vec<usize> = leaves.iter().copied().filter(|&j| height(j) <= height(lowest) + reach).take(4).collect();
    if feet.len() != 2 && feet.len() != 4 {
        return Err(IkError::InvalidRig(format!(
            "no joint names of a known convention, and the skeleton's lowest chains ({}) are not two or four legs: \
             map the legs by name",
            feet.iter().map(|&j| names[j].as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    let mut legs: Vec<[usize; 4]> = feet
        .iter()
        .map(|&toe| {
            let ankle = parents[toe].expect("depth ≥ 4");
            let knee = parents[ankle].expect("depth ≥ 4");
            [parents[knee].expect("depth ≥ 4"), knee, ankle, toe]
        })
        .collect();
    let mut pelvis = legs[0][0];
    for leg in &legs[1..] {
        pelvis = common_ancestor(parents, pelvis, leg[0])
            .ok_or_else(|| IkError::InvalidRig("the legs found by shape share no joint above them".into()))?;
    }
    if legs.iter().any(|l| l[0] == pelvis) {
        return Err(IkError::InvalidRig("a leg found by shape starts at the pelvis: map the legs by name".into()));
    }
    // Left first (by the hips' side of the pelvis, +x), then right.
    legs.sort_by(|a, b| rest[b[0]].position().x.total_cmp(&rest[a[0]].position().x));
    Ok(FoundLegs { pelvis, legs, by_shape: true })
}

/// Whether `j` is `above` or below it.
fn descends(parents: &[Option<usize>], j: usize, above: usize) -> bool {
    let mut at = Some(j);
    while let Some(k) = at {
        if k == above {
            return true;
        }
        at = parents[k];
    }
    false
}

fn depth(parents: &[Option<usize>], j: usize) -> usize {
    let mut d = 0;
    let mut at = parents[j];
    while let Some(k) = at {
        d += 1;
        at = parents[k];
    }
    d
}

/// The lowest joint that is `a` or above it and has `b` at or below it.
fn common_ancestor(parents: &[Option<usize>], a: usize, b: usize) -> Option<usize> {
    let mut at = Some(a);
    while let Some(k) = at {
        if descends(parents, b, k) {
            return Some(k);
        }
        at = parents[k];
    }
    None
}

/// `"Heel.IK.L ← Armature root"`-style list of a joint's parents.
fn ancestry(names: &[String], parents: &[Option<usize>], j: usize) -> String {
    let mut out = Vec::new();
    let mut at = parents[j];
    while let Some(k) = at {
        out.push(names[k].as_str());
        at = parents[k];
    }
    if out.is_empty() {
        "none, it is a top joint".into()
    } else {
        out.join(" ← ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_every_convention_split_to_side_and_core() {
        let cases = [
            ("mixamorig:LeftUpLeg", Some(Side::Left), "upleg"),
            ("mixamorig1:RightToeBase", Some(Side::Right), "toebase"),
            ("thigh_l", Some(Side::Left), "thigh"),
            ("calf_r", Some(Side::Right), "calf"),
            ("LeftUpperLeg", Some(Side::Left), "upperleg"),
            ("J_Bip_L_LowerLeg", Some(Side::Left), "lowerleg"),
            ("DEF-shin.L", Some(Side::Left), "shin"),
            ("ORG-foot.R", Some(Side::Right), "foot"),
            ("b_LeftLeg01_015", Some(Side::Left), "leg01"),
            ("Armature|Hips", None, "hips"),
            ("pelvis", None, "pelvis"),
            ("LHipJoint", None, "lhipjoint"),
        ];
        for (name, side, core) in cases {
            assert_eq!(split_name(name), (side, core.to_string()), "{name}");
        }
    }
}
