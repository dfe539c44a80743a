//! The grants of each tool: the union of what the resources it takes declare, checked once at
//! start-up.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use super::grant::Grants;
use crate::registry::Registry;
use crate::resource::Resources;

/// A resource's grant that refuses the start (the executor reports it as
/// [`ExecutorError::InvalidGrant`](crate::ExecutorError::InvalidGrant)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidGrant {
    /// The resource whose grant is not valid.
    pub resource: &'static str,
    /// What is wrong, naming the resource.
    pub message: String,
}

impl fmt::Display for InvalidGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Per tool, what the resources it takes grant it (checked and resolved); tools without grants
/// are left out. An invalid grant refuses the start, naming the resource.
pub(crate) fn tool_grants(
    registry: &Registry,
    resources: &Resources,
    root: &Path,
) -> Result<HashMap<String, Grants>, InvalidGrant> {
    let invalid = |resource: &'static str, why: String| InvalidGrant {
        resource,
        message: format!("the sandbox grant of resource `{resource}` is not valid: {why}"),
    };
    for (name, declared) in resources.all_grants() {
        declared.checked(root).map_err(|why| invalid(name, why))?;
    }
    let mut out = HashMap::new();
    for tool in registry.iter() {
        let mut grants = Grants::new();
        for ty in tool.def().resources() {
            let Some(declared) = resources.grants(*ty) else {
                continue;
            };
            let checked = declared
                .checked(root)
                .map_err(|why| invalid(ty.name(), why))?;
            grants.extend(&checked);
        }
        if !grants.is_empty() {
            out.insert(tool.decl().name.clone(), grants);
        }
    }
    Ok(out)
}
