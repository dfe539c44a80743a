//! What the commands share: the executor configuration and the error type.

/// The executor configuration every command shares: with the `safety` feature, the static script
/// scan with the default policy as the script gate, so script tools run only after a scan
/// (without it there is no gate, and script tools are refused).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn executor_config(
    config: crate::executor::ExecutorConfig,
) -> Result<crate::executor::ExecutorConfig, CliError> {
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
