//! Bevy's math types go straight into crowd-ik's API (feature `glam-0-33`).

use bevy_math::{Quat, Vec3};
use crowd_ik::{TwoBoneChain, TwoBoneSolved};

fn main() {
    let joints: [Vec3; 3] = [Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 0.55, 0.05), Vec3::new(0.0, 0.1, 0.0)];
    let chain = TwoBoneChain::new(joints, [Quat::IDENTITY; 3], Vec3::new(0.0, 0.2, 0.1));
    let mut solved = TwoBoneSolved::default();
    crowd_ik::cpu::two_bone(&chain, &mut solved);
    // The solved pose comes back as Bevy's own types.
    let ankle: Vec3 = solved.position(2);
    let knee: Quat = solved.rotation(1);
    println!("ankle {ankle}, knee {knee}, reached {}", solved.reached());
}
