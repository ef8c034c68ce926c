//! Adapter and device creation for headless use, with errors that say what to install.

use std::sync::{Arc, Mutex};

use super::layouts::Layouts;
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
    /// Validation errors reported by wgpu since the last [`GpuContext::check`].
    errors: Arc<Mutex<Vec<String>>>,
}

/// What to tell a user with no adapter.
pub const NO_ADAPTER_HINT: &str = "no Vulkan/GL adapter found. On Debian/Ubuntu install the software Vulkan driver: \
     `sudo apt-get install mesa-vulkan-drivers` (lavapipe), or pick a backend with WGPU_BACKEND=vulkan|gl";

impl GpuContext {
    /// Create a headless device. `WGPU_BACKEND` (vulkan, gl, …) and `WGPU_ADAPTER_NAME`
    /// select the adapter as in wgpu's examples.
    pub fn new_headless() -> Result<GpuContext> {
        pollster::block_on(Self::new_async())
    }

    async fn new_async() -> Result<GpuContext> {
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
        Self::from_adapter(instance, adapter).await
    }

    /// A device on `adapter` with the adapter's own limits (the palette storage buffer is
    /// sized to the scene), after checking it can run skinning at all.
    pub async fn from_adapter(
        instance: wgpu::Instance,
        adapter: wgpu::Adapter,
    ) -> Result<GpuContext> {
        let info = adapter.get_info();
        let caps = adapter.get_downlevel_capabilities();
        if !caps.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
            return Err(Error::NoAdapter(format!(
                "adapter {} has no compute shaders; {NO_ADAPTER_HINT}",
                info.name
            )));
        }
        if !caps.flags.contains(wgpu::DownlevelFlags::VERTEX_STORAGE) {
            return Err(Error::NoAdapter(format!(
                "adapter {} cannot read storage buffers in vertex shaders (the uniform-buffer palette path is not built yet)",
                info.name
            )));
        }
        // Take the adapter's limits: the palette storage buffer is sized to the scene.
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("skinview"),
                required_features: wgpu::Features::empty(),
                required_limits: adapter.limits(),
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
        let layouts = Layouts::new(&device);
        Ok(GpuContext {
            instance,
            adapter,
            device,
            queue,
            info,
            layouts,
            errors,
        })
    }

    /// One line describing the adapter.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?}, {:?}, driver {} {})",
            self.info.name,
            self.info.backend,
            self.info.device_type,
            self.info.driver,
            self.info.driver_info
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
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu(format!("poll: {e}")))?;
        rx.recv()
            .map_err(|_| Error::Gpu("map callback never ran".into()))?
            .map_err(|e| Error::Gpu(format!("map_async: {e}")))?;
        let bytes = staging
            .get_mapped_range(..)
            .map_err(|e| Error::Gpu(format!("get_mapped_range: {e}")))?
            .to_vec();
        staging.unmap();
        self.check()?;
        Ok(bytes)
    }
}
