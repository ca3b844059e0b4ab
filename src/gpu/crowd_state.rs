//! Foot placement on the GPU: the frame time and the per-character state buffer of
//! [`CrowdSolver`] (resets, the crowd changing, reading the state back for tools and tests).

use super::buffers::{map_read, staging_buffer};
use super::crowd::{CrowdSolver, FRAME_OFFSET};
use super::error::GpuError;
use crate::crowd::{CharacterState, FrameInput};

impl CrowdSolver {
    /// Foot placement: sets the time since the last frame (seconds), read by the frames
    /// encoded from now on (it stays until set again; 0 before the first call). It must be
    /// finite and ≥ 0; a frame longer than
    /// [`MAX_FRAME_TIME`](crate::constants::MAX_FRAME_TIME) resets every character, flagged
    /// [`foot::RESET`](crate::crowd::foot::RESET); one shorter than
    /// [`MIN_FRAME_TIME`](crate::constants::MIN_FRAME_TIME) (1e-6 s) is no time. A stateless
    /// rig has no use for it and ignores it (a renderer may set it every frame whatever the
    /// rig).
    pub fn set_frame_time(&mut self, dt: f32) -> Result<(), GpuError> {
        crate::crowd::placement::check_frame_time(dt).map_err(GpuError::Input)?;
        let Some(placement) = self.placement else { return Ok(()) };
        let frame = FrameInput::new(&placement, dt);
        self.context.queue().write_buffer(&self.rig_buf, FRAME_OFFSET, bytemuck::bytes_of(&frame));
        Ok(())
    }

    /// Foot placement: resets these characters' state (spawned or teleported characters):
    /// their next frame snaps to its solve. Indices past the crowd's buffers are ignored.
    pub fn reset_states(&mut self, characters: &[usize]) {
        let Some(states) = self.frame.as_ref().and_then(|f| f.states.as_ref()) else { return };
        const ZERO: [u8; std::mem::size_of::<CharacterState>()] = [0; std::mem::size_of::<CharacterState>()];
        let bytes = self.state_bytes;
        for &c in characters {
            if (c as u64 + 1) * bytes <= states.size() {
                self.context.queue().write_buffer(states, c as u64 * bytes, &ZERO[..bytes as usize]);
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
        let bytes = self.state_bytes;
        let old_len = (old_states.size() / bytes) as usize;
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
                    src as u64 * bytes,
                    new_states,
                    dst as u64 * bytes,
                    n as u64 * bytes,
                );
            }
        })?;
        self.frame = Some(frame);
        self.count = 0; // upload the new crowd
        Ok(())
    }

    /// Foot placement: the per-character state buffer (`None` for a stateless rig or before
    /// the first upload). Each character's record is the first `32 + 128 × legs` bytes of its
    /// [`CharacterState`] (the rig's legs only; a biped's 288 bytes), records back to back;
    /// [`CrowdSolver::read_states`] unpacks them.
    #[must_use]
    pub fn state_buffer(&self) -> Option<&wgpu::Buffer> {
        self.frame.as_ref().and_then(|f| f.states.as_ref())
    }

    /// Foot placement: writes these states for characters `first..first + states.len()`
    /// (a saved game restored, a character moved in from another solver, tests); only the
    /// rig's legs are stored. Values are checked by the kernel, not here: a state the crate
    /// could not have written (not finite, out of range, stray flag bits) resets its
    /// character, flagged [`foot::RESET`](crate::crowd::foot::RESET).
    pub fn write_states(&mut self, first: usize, states: &[CharacterState]) -> Result<(), GpuError> {
        let Some(buffer) = self.state_buffer() else {
            return Err(GpuError::Input(crate::error::IkError::StateRequired));
        };
        let record = self.state_bytes as usize;
        let capacity = (buffer.size() / self.state_bytes) as usize;
        if first + states.len() > capacity {
            return Err(GpuError::LengthMismatch { chains: capacity, outputs: first + states.len() });
        }
        let packed: Vec<u8> = states.iter().flat_map(|s| bytemuck::bytes_of(s)[..record].iter().copied()).collect();
        if !packed.is_empty() {
            self.context.queue().write_buffer(buffer, (first * record) as u64, &packed);
        }
        Ok(())
    }

    /// Blocking: reads back the foot-placement state of the first `states.len()` characters
    /// (tools and tests; the frame loop never needs it).
    pub fn read_states(&self, states: &mut [CharacterState]) -> Result<(), GpuError> {
        self.context.check_lost()?;
        let Some(buffer) = self.state_buffer() else {
            return Err(GpuError::Input(crate::error::IkError::StateRequired));
        };
        let record = self.state_bytes;
        let bytes = states.len() as u64 * record;
        if bytes > buffer.size() {
            return Err(GpuError::LengthMismatch { chains: (buffer.size() / record) as usize, outputs: states.len() });
        }
        if bytes == 0 {
            return Ok(());
        }
        let staging = staging_buffer(self.context.device(), bytes);
        self.context.submit("foot_ik read states", |e| e.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes))?;
        let mut out = vec![0u8; bytes as usize];
        map_read(self.context.device(), &staging, &mut out)?;
        // Each record is its state's first bytes; the legs past the rig's are zero.
        for (state, packed) in states.iter_mut().zip(out.chunks_exact(record as usize)) {
            *state = CharacterState::default();
            bytemuck::bytes_of_mut(state)[..packed.len()].copy_from_slice(packed);
        }
        self.context.check_lost()
    }
}
