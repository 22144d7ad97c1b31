//! The host's own time per request, from the read that completed its frame
//! to the write that carried its answer, for requests answered on the
//! connection's task: bench instrumentation, built only with the feature
//! `frame-timings` (the test harness turns it on; the plugin's build has
//! none of it). Kept only when `$PI_IDE_FRAME_TIMINGS` names a file (the
//! bench sets it); each connection appends `LABEL NANOS` lines to it when
//! it ends. Otherwise this costs one branch per request.

#[cfg(feature = "frame-timings")]
pub use kept::FrameTimings;

/// Without the feature: nothing kept, nothing to do.
#[cfg(not(feature = "frame-timings"))]
pub struct FrameTimings;

#[cfg(not(feature = "frame-timings"))]
impl FrameTimings {
    pub fn from_env() -> FrameTimings {
        FrameTimings
    }

    pub fn answered(
        &mut self,
        _method: &str,
        _params: &serde_json::Value,
        _at: std::time::Instant,
    ) {
    }

    pub fn written(&mut self) {}

    pub fn save(&self) {}
}

#[cfg(feature = "frame-timings")]
mod kept {
    use std::io::Write;
    use std::path::PathBuf;
    use std::time::Instant;

    use serde_json::Value;

    /// Most samples one connection keeps.
    const MAX_SAMPLES: usize = 100_000;

    pub struct FrameTimings(Option<Kept>);

    struct Kept {
        path: PathBuf,
        /// Answered, not yet written: label and when its frame was read.
        waiting: Vec<(String, Instant)>,
        samples: Vec<(String, u128)>,
    }

    impl FrameTimings {
        pub fn from_env() -> FrameTimings {
            FrameTimings(std::env::var_os("PI_IDE_FRAME_TIMINGS").map(|path| Kept {
                path: PathBuf::from(path),
                waiting: Vec::new(),
                samples: Vec::new(),
            }))
        }

        /// A request was answered into the write buffer.
        pub fn answered(&mut self, method: &str, params: &Value, read_at: Instant) {
            if let Some(kept) = &mut self.0 {
                let label = match params.get("name").and_then(Value::as_str) {
                    Some(tool) if method == "tools/call" => format!("{method} {tool}"),
                    _ => method.to_owned(),
                };
                kept.waiting.push((label, read_at));
            }
        }

        /// The write buffer went out.
        pub fn written(&mut self) {
            if let Some(kept) = &mut self.0 {
                let now = Instant::now();
                for (label, read_at) in kept.waiting.drain(..) {
                    if kept.samples.len() < MAX_SAMPLES {
                        kept.samples.push((label, (now - read_at).as_nanos()));
                    }
                }
            }
        }

        /// Appends this connection's samples to the file.
        pub fn save(&self) {
            let Some(kept) = &self.0 else { return };
            let lines: String = kept
                .samples
                .iter()
                .map(|(label, nanos)| format!("{label} {nanos}\n"))
                .collect();
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&kept.path)
                .and_then(|mut file| file.write_all(lines.as_bytes()));
            if let Err(error) = written {
                tracing::warn!(
                    "frame timings not saved to {}: {error}",
                    kept.path.display()
                );
            }
        }
    }
}
