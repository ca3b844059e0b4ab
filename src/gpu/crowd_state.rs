//! Foot placement on the GPU: the frame time and the per-character state buffer of
//! [`CrowdSolver`] (resets, the crowd changing, reading the state back for tools and tests).

use super::buffers::{map_read, staging_buffer};
use super::crowd::{CrowdSolver, FRAME_OFFSET, STATE_BYTES};
use super::error::GpuError;
use crate::crowd::{CharacterState, FrameInput};

impl CrowdSolver {
    /// Foot placement: sets the time since the last frame (seconds), read by the frames
    /// encoded from now on (it stays until set again; 0 before the first call). It must be
    /// finite and ≥ 0; a frame longer than
    /// [`MAX_FRAME_TIME`](crate::constants::MAX_FRAME_TIME) resets every character, flagged
    /// [`foot::RESET`](crate::crowd::foot::RESET). A stateless rig ignores it.
    pub fn set_frame_time(&mut self, dt: f32) -> Result<(), GpuError> {
        crate::cpu::foot_ik::check_frame_time(dt).map_err(GpuError::Input)?;
        let Some(placement) = self.placement else { return Ok(()) };
        let frame = FrameInput::new(&placement, dt);
        self.context.queue().write_buffer(&self.rig_buf, FRAME_OFFSET, bytemuck::bytes_of(&frame));
        Ok(())
    }

    /// Foot placement: resets these characters' state (spawned or teleported characters):
    /// their next frame snaps to its solve. Indices past the crowd's buffers are ignored.
    pub fn reset_states(&mut self, characters: &[usize]) {
        let Some(states) = self.frame.as_ref().and_then(|f| f.states.as_ref()) else { return };
        let zero = [0u8; STATE_BYTES as usize];
        for &c in characters {
            if (c as u64 + 1) * STATE_BYTES <= states.size() {
                self.context.queue().write_buffer(states, c as u64 * STATE_BYTES, &zero);
            }
        }
    }

    /// Foot placement: resets every character's state.
    pub fn reset_all_states(&mut self) -> Result<(), GpuError> {
        let Some(states) = self.frame.as_ref().and_then(|f| f.states.as_ref()) else { return Ok(()) };
        self.context.submit("foot_ik reset states", |e| e.clear_buffer(states, 0, None))
    }

    /// Foot placement: keeps each surviving character's state when the crowd changes
    /// (despawns compacted, spawns appended or inserted): after it, character `i` has the
    /// state of old character `map[i]`, `None` = reset. On the GPU (copies between
    /// buffers), nothing read back. Upload the new crowd after it.
    /// The CPU twin is [`crate::crowd::remap_states`].
    pub fn remap_states(&mut self, map: &[Option<usize>]) -> Result<(), GpuError> {
        let Some(old) = self.frame.take() else { return Ok(()) };
        let Some(old_states) = old.states.as_ref() else {
            self.frame = Some(old);
            return Ok(());
        };
        let capacity = old.capacity.max(map.len().next_power_of_two()).min(self.max_characters().max(1));
        if map.len() > capacity {
            self.frame = Some(old);
            return Err(GpuError::BatchTooLarge { chains: map.len(), max: capacity });
        }
        let frame = self.make_frame(capacity, None);
        let new_states = frame.states.as_ref().expect("foot placement");
        let old_len = (old_states.size() / STATE_BYTES) as usize;
        // Runs of consecutive surviving characters, one copy each.
        let mut runs: Vec<(usize, usize, usize)> = Vec::new();
        for (i, m) in map.iter().enumerate() {
            let Some(src) = m.filter(|&m| m < old_len) else { continue };
            match runs.last_mut() {
                Some((s, d, n)) if *s + *n == src && *d + *n == i => *n += 1,
                _ => runs.push((src, i, 1)),
            }
        }
        self.context.submit("foot_ik remap states", |e| {
            for &(src, dst, n) in &runs {
                e.copy_buffer_to_buffer(
                    old_states,
                    src as u64 * STATE_BYTES,
                    new_states,
                    dst as u64 * STATE_BYTES,
                    n as u64 * STATE_BYTES,
                );
            }
        })?;
        self.frame = Some(frame);
        self.count = 0; // upload the new crowd
        Ok(())
    }

    /// Foot placement: the per-character [`CharacterState`] buffer (`None` for a stateless
    /// rig or before the first upload).
    #[must_use]
    pub fn state_buffer(&self) -> Option<&wgpu::Buffer> {
        self.frame.as_ref().and_then(|f| f.states.as_ref())
    }

    /// Blocking: reads back the foot-placement state of the first `states.len()` characters
    /// (tools and tests; the frame loop never needs it).
    pub fn read_states(&self, states: &mut [CharacterState]) -> Result<(), GpuError> {
        self.context.check_lost()?;
        let Some(buffer) = self.state_buffer() else {
            return Err(GpuError::Input(crate::IkError::StateRequired));
        };
        let bytes = std::mem::size_of_val(states) as u64;
        if bytes > buffer.size() {
            return Err(GpuError::LengthMismatch {
                chains: (buffer.size() / STATE_BYTES) as usize,
                outputs: states.len(),
            });
        }
        if bytes == 0 {
            return Ok(());
        }
        let staging = staging_buffer(self.context.device(), bytes);
        self.context.submit("foot_ik read states", |e| e.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes))?;
        let mut out = vec![0u8; bytes as usize];
        map_read(self.context.device(), &staging, &mut out)?;
        bytemuck::cast_slice_mut(states).copy_from_slice(&out);
        self.context.check_lost()
    }
}
