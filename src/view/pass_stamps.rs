//! Timestamps at the start and end of GPU passes (where the adapter writes them), resolved
//! into a buffer to read: waiting for it (the GPU benchmark) or a frame or two late (the viewer's
//! crowd). Pass k writes stamps 2k and 2k + 1.

use crate::error::Result;
use crate::gpu::GpuContext;

/// A query set of timestamps, its resolve buffer and a staging copy to map.
pub struct PassStamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    staging: wgpu::Buffer,
    count: u32,
    period_ns: f64,
}

impl PassStamps {
    /// Stamps for `passes` passes, labelled `label`; None where the adapter writes none.
    pub fn new(ctx: &GpuContext, passes: u32, label: &str) -> Option<PassStamps> {
        if !ctx.timestamps() || passes == 0 {
            return None;
        }
        let count = 2 * passes;
        let bytes = u64::from(count) * wgpu::QUERY_SIZE as u64;
        let buffer = |usage| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(PassStamps {
            set: ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some(label),
                ty: wgpu::QueryType::Timestamp,
                count,
            }),
            resolve: buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            staging: buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            count,
            period_ns: f64::from(ctx.queue.get_timestamp_period()),
        })
    }

    /// A render pass's stamps, from stamp `first` (pass `first / 2`).
    pub fn render(&self, first: u32) -> wgpu::RenderPassTimestampWrites<'_> {
        wgpu::RenderPassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(first + 1),
        }
    }

    /// A compute pass's stamps, from stamp `first`.
    pub fn compute(&self, first: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(first + 1),
        }
    }

    /// Resolve every stamp into the staging buffer (which must not be mapped).
    pub fn resolve(&self, enc: &mut wgpu::CommandEncoder) {
        enc.resolve_query_set(&self.set, 0..self.count, &self.resolve, 0);
        enc.copy_buffer_to_buffer(&self.resolve, 0, &self.staging, 0, self.resolve.size());
    }

    /// The staging buffer the stamps are copied to (to map without waiting).
    pub fn staging(&self) -> &wgpu::Buffer {
        &self.staging
    }

    /// Each pass's duration (ms) from the staging buffer's mapped `bytes`: None for a pass
    /// whose stamps were not written (zero) or run backwards.
    pub fn durations_ms(&self, bytes: &[u8]) -> Vec<Option<f64>> {
        let ticks: Vec<u64> = bytes
            .chunks_exact(8)
            .map(bytemuck::pod_read_unaligned::<u64>)
            .collect();
        ticks
            .chunks_exact(2)
            .map(|p| match (p[0], p[1]) {
                (a, b) if a > 0 && b >= a => Some((b - a) as f64 * self.period_ns * 1e-6),
                _ => None,
            })
            .collect()
    }

    /// Each pass's duration (ms), waiting for the encoder that resolved them to run.
    pub fn read(&self, ctx: &GpuContext) -> Result<Vec<Option<f64>>> {
        let bytes = ctx.map_read(&self.staging)?;
        Ok(self.durations_ms(&bytes))
    }
}
