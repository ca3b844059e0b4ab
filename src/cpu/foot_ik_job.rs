//! The CPU crowd foot-IK job: a frame of [`foot_ik`] for every character, on one thread or
//! all cores, stateless or with foot placement.

use rayon::prelude::*;

use super::foot_ground::GroundData;
use super::foot_ik::foot_ik;
use crate::crowd::{
    CharacterInput, CharacterState, FootResult, FootRig, FrameInput, Ground, GroundHit, JointPose, MAX_LEGS,
};
use crate::error::IkError;

/// One character's inputs and outputs, as zipped by [`FootIkJob`].
type Stateless<'a> = (usize, ((&'a CharacterInput, &'a [JointPose]), (&'a mut [JointPose], &'a mut FootResult)));
/// ...and its foot-placement state.
type Temporal<'a> = (
    usize,
    (((&'a CharacterInput, &'a [JointPose]), (&'a mut [JointPose], &'a mut FootResult)), &'a mut CharacterState),
);

/// A crowd frame for the CPU: the rig and ground, this frame's characters and FK poses
/// (`characters.len() × joint_count` joints, character-major), and the outputs.
///
/// Stateless rigs run with [`FootIkJob::run`]; a rig with foot placement
/// ([`FootRig::placement`]) runs with [`FootIkJob::run_frame`], which also advances one
/// [`CharacterState`] per character by the frame time.
pub struct FootIkJob<'a> {
    /// The rig.
    pub rig: &'a FootRig,
    /// The ground.
    pub ground: &'a Ground,
    /// One entry per character.
    pub characters: &'a [CharacterInput],
    /// Caller ground hits, `characters × MAX_LEGS` (only with [`Ground::Hits`]; else empty).
    pub hits: &'a [GroundHit],
    /// FK model-space poses, character-major.
    pub poses_in: &'a [JointPose],
    /// Corrected poses, same layout.
    pub poses_out: &'a mut [JointPose],
    /// One result per character.
    pub results: &'a mut [FootResult],
}

impl<'a> FootIkJob<'a> {
    /// A frame with no caller hits (a heightfield ground; set `hits` for [`Ground::Hits`]).
    #[must_use]
    pub fn new(
        rig: &'a FootRig,
        ground: &'a Ground,
        characters: &'a [CharacterInput],
        poses_in: &'a [JointPose],
        poses_out: &'a mut [JointPose],
        results: &'a mut [FootResult],
    ) -> Self {
        Self { rig, ground, characters, hits: &[], poses_in, poses_out, results }
    }

    /// Checks the rig, the ground and the slice lengths.
    pub fn validate(&self) -> Result<(), IkError> {
        self.rig.validate()?;
        if let Ground::Heightfield(h) = self.ground {
            h.validate()?;
        }
        let (c, n) = (self.characters.len(), self.rig.joint_count());
        let mismatch = |m: String| Err(IkError::FrameMismatch(m));
        if self.poses_in.len() != c * n || self.poses_out.len() != c * n {
            return mismatch(format!(
                "{c} characters × {n} joints but {} poses in, {} out",
                self.poses_in.len(),
                self.poses_out.len()
            ));
        }
        if self.results.len() != c {
            return mismatch(format!("{c} characters but {} results", self.results.len()));
        }
        let hits = if matches!(self.ground, Ground::Hits) { c * MAX_LEGS } else { 0 };
        if self.hits.len() != hits {
            return mismatch(format!("{} ground hits; expected {hits}", self.hits.len()));
        }
        Ok(())
    }

    /// Solves every character on the calling thread, each frame from scratch. A rig with
    /// foot placement needs [`FootIkJob::run_frame`] (error [`IkError::StateRequired`]).
    pub fn run(&mut self) -> Result<(), IkError> {
        self.solve(false, None)
    }

    /// Solves every character on all cores; bit-identical to [`FootIkJob::run`].
    pub fn run_par(&mut self) -> Result<(), IkError> {
        self.solve(true, None)
    }

    /// Solves one frame of foot placement on the calling thread: `states` (one per
    /// character, kept by the caller across frames; `CharacterState::default()` for a new or
    /// reset character) are read and advanced by `dt` seconds. `dt` must be finite and
    /// ≥ 0; a frame longer than [`MAX_FRAME_TIME`](crate::constants::MAX_FRAME_TIME)
    /// resets every character (flagged [`foot::RESET`](crate::crowd::foot::RESET)); one
    /// shorter than [`MIN_FRAME_TIME`](crate::constants::MIN_FRAME_TIME) (1e-6 s) is no time.
    /// A stateless rig is [`IkError::StateNotUsed`] (run it with [`FootIkJob::run`]).
    pub fn run_frame(&mut self, states: &mut [CharacterState], dt: f32) -> Result<(), IkError> {
        self.solve(false, Some((states, dt)))
    }

    /// [`FootIkJob::run_frame`] on all cores; bit-identical to it.
    pub fn run_frame_par(&mut self, states: &mut [CharacterState], dt: f32) -> Result<(), IkError> {
        self.solve(true, Some((states, dt)))
    }

    fn solve(&mut self, par: bool, frame: Option<(&mut [CharacterState], f32)>) -> Result<(), IkError> {
        self.validate()?;
        let c = self.characters.len();
        let frame = match frame {
            Some((states, dt)) if self.rig.placement.is_some() => {
                crate::crowd::placement::check_frame_time(dt)?;
                if states.len() != c {
                    return Err(IkError::FrameMismatch(format!("{c} characters but {} states", states.len())));
                }
                Some((states, dt))
            }
            None if self.rig.placement.is_some() => return Err(IkError::StateRequired),
            Some(_) => return Err(IkError::StateNotUsed),
            None => None,
        };
        let n = self.rig.joint_count();
        let rig = self.rig.solver_rig(self.ground);
        let table = self.rig.joint_table();
        let heights: &[f32] = match self.ground {
            Ground::Heightfield(h) => &h.heights,
            Ground::Hits => &[],
        };
        let g = GroundData { heights, hits: self.hits };
        let hits_of = |c: usize| if g.hits.is_empty() { &[][..] } else { &g.hits[c * MAX_LEGS..(c + 1) * MAX_LEGS] };
        let chars = self.characters;
        match frame {
            None => {
                // Stateless: no state is read or written.
                let work = |(c, ((ch, pin), (pout, res))): Stateless<'_>| {
                    foot_ik(&rig, &table, &g, ch, hits_of(c), pin, pout, res, None);
                };
                if par {
                    let inputs = chars.par_iter().zip(self.poses_in.par_chunks(n));
                    let outputs = self.poses_out.par_chunks_mut(n).zip(self.results.par_iter_mut());
                    inputs.zip(outputs).enumerate().for_each(work);
                } else {
                    let inputs = chars.iter().zip(self.poses_in.chunks(n));
                    let outputs = self.poses_out.chunks_mut(n).zip(self.results.iter_mut());
                    inputs.zip(outputs).enumerate().for_each(work);
                }
            }
            Some((states, dt)) => {
                let placement = self.rig.placement.as_ref().expect("checked above");
                let time = FrameInput::new(placement, dt);
                let work = |(c, (((ch, pin), (pout, res)), state)): Temporal<'_>| {
                    foot_ik(&rig, &table, &g, ch, hits_of(c), pin, pout, res, Some((state, &time)));
                };
                if par {
                    let inputs = chars.par_iter().zip(self.poses_in.par_chunks(n));
                    let outputs = self.poses_out.par_chunks_mut(n).zip(self.results.par_iter_mut());
                    inputs.zip(outputs).zip(states.par_iter_mut()).enumerate().for_each(work);
                } else {
                    let inputs = chars.iter().zip(self.poses_in.chunks(n));
                    let outputs = self.poses_out.chunks_mut(n).zip(self.results.iter_mut());
                    inputs.zip(outputs).zip(states.iter_mut()).enumerate().for_each(work);
                }
            }
        }
        Ok(())
    }
}
