//! Adapter and device creation for headless use, with errors that say what to install.

use std::sync::{Arc, Mutex};

use super::layouts::Layouts;
use super::palette_source::{DEFAULT_UNIFORM_BONES, PaletteSource};
use super::shader_types::{UNIFORM_MORPH_SLOTS, WORKGROUP_SIZE};
use crate::error::{Error, Result};

/// A device and queue plus the adapter facts and bind group layouts the pipelines need.
pub struct GpuContext {
    /// The wgpu instance (a window's surface is made from it).
    pub instance: wgpu::Instance,
    /// The adapter the device came from.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Adapter name, backend, driver.
    pub info: wgpu::AdapterInfo,
    /// Bind group layouts every pipeline and scene on this device share.
    pub layouts: Layouts,
    /// Compute shaders with storage buffers (the capture shader) are available.
    compute: bool,
    /// Validation errors reported by wgpu since the last [`GpuContext::check`].
    errors: Arc<Mutex<Vec<String>>>,
}

/// What to tell a user with no adapter.
pub const NO_ADAPTER_HINT: &str = "no Vulkan/GL adapter found. On Debian/Ubuntu install the software Vulkan driver: \
     `sudo apt-get install mesa-vulkan-drivers` (lavapipe), or pick a backend with WGPU_BACKEND=vulkan|gl";

impl GpuContext {
    /// Create a headless device. `WGPU_BACKEND` (vulkan, gl, …) and `WGPU_ADAPTER_NAME`
    /// select the adapter as in wgpu's examples; `SKINVIEW_LIMITS=webgl2` asks the device for
    /// WebGL2-class limits (no storage buffers, no compute), so the uniform palette path can be
    /// run and tested on any adapter as a downlevel GPU would run it.
    pub fn new_headless() -> Result<GpuContext> {
        pollster::block_on(Self::new_async(Self::limits_from_env()?))
    }

    /// The device limits `SKINVIEW_LIMITS` asks for: `None` (unset, empty or `adapter`: the
    /// adapter's own) or WebGL2-class limits (`webgl2`); anything else is an error.
    pub fn limits_from_env() -> Result<Option<wgpu::Limits>> {
        match std::env::var("SKINVIEW_LIMITS").ok().as_deref() {
            None | Some("") | Some("adapter") => Ok(None),
            Some("webgl2") => Ok(Some(wgpu::Limits::downlevel_webgl2_defaults())),
            Some(other) => Err(Error::Gpu(format!(
                "SKINVIEW_LIMITS={other}: expected `adapter` (the default) or `webgl2`"
            ))),
        }
    }

    /// A headless device with `limits` (each at most the adapter's) instead of the adapter's
    /// own: tests run the downlevel path with `wgpu::Limits::downlevel_webgl2_defaults()`.
    pub fn new_headless_with_limits(limits: wgpu::Limits) -> Result<GpuContext> {
        pollster::block_on(Self::new_async(Some(limits)))
    }

    async fn new_async(limits: Option<wgpu::Limits>) -> Result<GpuContext> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = match wgpu::util::initialize_adapter_from_env(&instance, None).await {
            Ok(a) => a,
            Err(_) => instance
                .request_adapter(&wgpu::RequestAdapterOptions {
                    power_preference: wgpu::PowerPreference::HighPerformance,
                    force_fallback_adapter: false,
                    compatible_surface: None,
                    apply_limit_buckets: false,
                })
                .await
                .map_err(|e| Error::NoAdapter(format!("{e}; {NO_ADAPTER_HINT}")))?,
        };
        Self::from_adapter_with_limits(instance, adapter, limits).await
    }

    /// A device on `adapter` with the adapter's own limits (the palette storage buffer is
    /// sized to the scene).
    pub async fn from_adapter(
        instance: wgpu::Instance,
        adapter: wgpu::Adapter,
    ) -> Result<GpuContext> {
        Self::from_adapter_with_limits(instance, adapter, None).await
    }

    /// A device on `adapter` with `limits` (`None`: the adapter's own). Adapters whose vertex
    /// stage cannot read storage buffers get the uniform palette path only
    /// ([`GpuContext::storage_palette`]); those without compute shaders no capture shader.
    pub async fn from_adapter_with_limits(
        instance: wgpu::Instance,
        adapter: wgpu::Adapter,
        limits: Option<wgpu::Limits>,
    ) -> Result<GpuContext> {
        let info = adapter.get_info();
        let caps = adapter.get_downlevel_capabilities();
        let required_limits = limits.unwrap_or_else(|| adapter.limits());
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("skinview"),
                // Timestamp queries where the adapter has them (the crowd benchmark).
                required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
                required_limits,
                ..Default::default()
            })
            .await
            .map_err(|e| Error::Gpu(format!("request_device on {}: {e}", info.name)))?;
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.to_string());
            }
        }));
        let layouts = Layouts::new(
            &device,
            caps.flags.contains(wgpu::DownlevelFlags::VERTEX_STORAGE),
        );
        let compute = caps.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
            && layouts.storage.is_some()
            && device.limits().max_compute_invocations_per_workgroup >= WORKGROUP_SIZE;
        Ok(GpuContext {
            instance,
            adapter,
            device,
            queue,
            info,
            layouts,
            compute,
            errors,
        })
    }

    /// The vertex stage can read storage buffers: the storage palette path (the default) is
    /// available. Otherwise only [`super::PaletteSource::Uniform`] draws.
    pub fn storage_palette(&self) -> bool {
        self.layouts.storage.is_some()
    }

    /// Passes can write timestamps (`wgpu::Features::TIMESTAMP_QUERY`).
    pub fn timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// The capture shader can run (compute shaders and storage buffers).
    pub fn compute_capture(&self) -> bool {
        self.compute
    }

    /// One line describing the adapter.
    pub fn describe(&self) -> String {
        let backend = match self.info.backend {
            wgpu::Backend::Vulkan => "Vulkan",
            wgpu::Backend::Metal => "Metal",
            wgpu::Backend::Dx12 => "Direct3D 12",
            wgpu::Backend::Gl => "OpenGL",
            wgpu::Backend::BrowserWebGpu => "WebGPU",
            _ => "another backend",
        };
        let kind = match self.info.device_type {
            wgpu::DeviceType::DiscreteGpu => "discrete GPU",
            wgpu::DeviceType::IntegratedGpu => "integrated GPU",
            wgpu::DeviceType::VirtualGpu => "virtual GPU",
            wgpu::DeviceType::Cpu => "software renderer on the CPU",
            _ => "unknown device type",
        };
        format!(
            "{} ({backend}, {kind}, driver {} {})",
            self.info.name, self.info.driver, self.info.driver_info
        )
    }

    /// Return the first validation error wgpu reported since the last call, if any.
    pub fn check(&self) -> Result<()> {
        let mut v = self
            .errors
            .lock()
            .map_err(|_| Error::Gpu("error log poisoned".into()))?;
        if let Some(first) = v.first().cloned() {
            let n = v.len();
            v.clear();
            return Err(Error::Gpu(if n > 1 {
                format!("{first} (and {} more)", n - 1)
            } else {
                first
            }));
        }
        Ok(())
    }

    /// Map a MAP_READ buffer and copy its bytes out (blocking).
    pub fn map_read(&self, staging: &wgpu::Buffer) -> Result<Vec<u8>> {
        self.map_read_with(staging, <[u8]>::to_vec)
    }

    /// [`GpuContext::map_read`] handing the mapped bytes to `read` instead of copying them
    /// (large readbacks are read in place: copies of tens of megabytes cost page faults).
    pub fn map_read_with<R>(
        &self,
        staging: &wgpu::Buffer,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R> {
        self.map_read_after(staging, None, read)
    }

    /// [`GpuContext::map_read_with`] waiting only for `submission` (the one that filled
    /// `staging`), not for work submitted after it: the main thread reads one result while
    /// the GPU runs the next. `None`: the latest submission.
    pub fn map_read_after<R>(
        &self,
        staging: &wgpu::Buffer,
        submission: Option<wgpu::SubmissionIndex>,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R> {
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        let wait = wgpu::PollType::Wait {
            submission_index: submission,
            timeout: None,
        };
        self.device
            .poll(wait)
            .map_err(|e| Error::Gpu(format!("poll: {e}")))?;
        rx.recv()
            .map_err(|_| Error::Gpu("map callback never ran".into()))?
            .map_err(|e| Error::Gpu(format!("map_async: {e}")))?;
        let result = {
            let bytes = staging
                .get_mapped_range(..)
                .map_err(|e| Error::Gpu(format!("get_mapped_range: {e}")))?;
            read(&bytes)
        };
        staging.unmap();
        self.check()?;
        Ok(result)
    }
}

// Which palette source this context can run (palette_source.rs says what each is).

/// The largest K whose block fits the device's uniform binding size.
pub fn max_uniform_bones(ctx: &GpuContext) -> u32 {
    let limit = ctx.device.limits().max_uniform_buffer_binding_size;
    // size(K) = 64 K + 16 ⌈K/4⌉ + 4 · slots ≤ 68 K + 12 + 4 · slots.
    let room = limit.saturating_sub(12 + 4 * UNIFORM_MORPH_SLOTS as u64) / 68;
    room.min(u32::MAX as u64) as u32
}

/// Check that `source` can run on `ctx`: the storage path needs vertex-stage storage buffers,
/// the uniform path a K from 1 up to [`max_uniform_bones`].
pub fn check_source(ctx: &GpuContext, source: PaletteSource) -> Result<()> {
    match source {
        PaletteSource::Storage if ctx.layouts.storage.is_none() => Err(Error::Gpu(format!(
            "adapter {} cannot read storage buffers in the vertex stage; use the uniform palette \
             path",
            ctx.info.name
        ))),
        PaletteSource::Storage => Ok(()),
        PaletteSource::Uniform { bones } => {
            let max = max_uniform_bones(ctx);
            if bones == 0 || bones > max {
                return Err(Error::Gpu(format!(
                    "a uniform palette of {bones} matrices: this adapter's uniform buffers hold \
                     1 to {max}"
                )));
            }
            Ok(())
        }
    }
}

/// The palette source to run: `requested` when given (checked against the adapter), else the
/// storage path where the vertex stage can read storage buffers, else a uniform array of
/// [`DEFAULT_UNIFORM_BONES`] (or as many as the adapter's uniform buffers hold).
pub fn choose_source(ctx: &GpuContext, requested: Option<PaletteSource>) -> Result<PaletteSource> {
    let source = match requested {
        Some(s) => s,
        None if ctx.storage_palette() => PaletteSource::Storage,
        None => PaletteSource::Uniform {
            bones: DEFAULT_UNIFORM_BONES.min(max_uniform_bones(ctx)),
        },
    };
    check_source(ctx, source)?;
    Ok(source)
}

/// Staging buffers asked to be mapped without waiting, counted down by their callbacks: the
/// state of an asynchronous readback ([`super::AsyncCapture`], [`super::AsyncDrawCapture`]).
#[derive(Default)]
pub struct MapsInFlight {
    pending: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The first failed map's error.
    failed: Arc<Mutex<Option<String>>>,
    in_flight: bool,
}

impl MapsInFlight {
    /// Ask for every one of `buffers` (filled by work already submitted) to be mapped.
    pub fn map_all<'b, I>(&mut self, buffers: I)
    where
        I: IntoIterator<Item = &'b wgpu::Buffer>,
        I::IntoIter: Clone,
    {
        use std::sync::atomic::Ordering;
        let buffers = buffers.into_iter();
        self.pending
            .store(buffers.clone().count(), Ordering::SeqCst);
        if let Ok(mut f) = self.failed.lock() {
            *f = None;
        }
        for b in buffers {
            let (pending, failed) = (self.pending.clone(), self.failed.clone());
            b.map_async(wgpu::MapMode::Read, .., move |r| {
                if let (Err(e), Ok(mut f)) = (r, failed.lock()) {
                    f.get_or_insert(e.to_string());
                }
                pending.fetch_sub(1, Ordering::SeqCst);
            });
        }
        self.in_flight = true;
    }

    /// Buffers are on their way (mapped or not yet).
    pub fn in_flight(&self) -> bool {
        self.in_flight
    }

    /// Whether every buffer asked for is now mapped (the device polled once, never waiting);
    /// `false` when none was asked for. Then they are no longer in flight: the caller reads
    /// and unmaps them. An error when a map failed (device lost, out of memory).
    pub fn landed(&mut self, ctx: &GpuContext, what: &str) -> Result<bool> {
        use std::sync::atomic::Ordering;
        if !self.in_flight {
            return Ok(false);
        }
        let _ = ctx.device.poll(wgpu::PollType::Poll);
        if self.pending.load(Ordering::SeqCst) > 0 {
            return Ok(false);
        }
        self.in_flight = false;
        if let Some(e) = self.failed.lock().ok().and_then(|mut f| f.take()) {
            return Err(Error::Gpu(format!("mapping {what} failed: {e}")));
        }
        Ok(true)
    }
}
