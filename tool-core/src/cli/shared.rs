//! What the commands share: the executor configuration and the error type.

use crate::executor::ScanMode;

/// The executor configuration every command shares: with the `safety` feature and the scan
/// [`ScanMode::On`], the static script scan with the default policy as the script gate, so script
/// tools run only after a scan (without the feature there is no gate, and a registry with
/// script tools is refused when the executor is built). With [`ScanMode::Off`] no gate is configured and script tools run unscanned.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn executor_config(
    config: crate::executor::ExecutorConfig,
    scan: ScanMode,
) -> Result<crate::executor::ExecutorConfig, CliError> {
    let config = config.scan(scan);
    if scan == ScanMode::Off {
        return Ok(config);
    }
    #[cfg(feature = "safety")]
    {
        let gate = crate::safety::ScannerGate::with_default_policy()
            .map_err(|e| CliError(format!("the default safety policy is invalid: {e}")))?;
        Ok(config.script_gate(std::sync::Arc::new(gate)))
    }
    #[cfg(not(feature = "safety"))]
    Ok(config)
}

/// A CLI failure: a message for stderr.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct CliError(pub(crate) String);

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError(e.to_string())
    }
}
