//! Many tools: a request that offers them all would spend the window on schemas.
//!
//! Sixty MCP tools take over 11,000 tokens of JSON Schema, more than the whole window of a
//! small local model. When the tools a turn offers would take more than a quarter of the
//! window, the request offers the built-in tools (and a caller's own), the MCP tools used most
//! that still fit in that quarter, and `find_tools`, which searches the rest by what they do.
//! Whatever it finds is offered, schema and all, from the next request of the question on.
//! Nothing is taken away: a held-back tool still runs when the model calls it by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use tooltrail_llm::estimate_tools;
use tooltrail_protocol::{ToolSource, ToolSpec};
use tooltrail_tools::{FindTools, Tool, ToolRegistry};

/// The share of the window the tools may take before some are held back: one part in this.
const TOOLS_SHARE: u32 = 4;

/// What a turn holds back, and the search over it.
struct Plan {
    /// The registry the plan was made for (the turn's own may change when a server's list
    /// does).
    base: Arc<ToolRegistry>,
    /// `base` with `find_tools`.
    registry: Arc<ToolRegistry>,
    /// The specs offered from the start, `find_tools` last.
    kept: Vec<ToolSpec>,
    /// The specs held back, by name.
    held: BTreeMap<String, ToolSpec>,
    finder: Arc<FindTools>,
}

/// The tools one turn offers when there are many.
pub(crate) struct ManyTools<'a> {
    counts: &'a BTreeMap<String, u64>,
    window: u32,
    plan: Option<Plan>,
}

impl<'a> ManyTools<'a> {
    pub(crate) fn new(counts: &'a BTreeMap<String, u64>, window: u32) -> Self {
        Self {
            counts,
            window,
            plan: None,
        }
    }

    /// The registry and specs the next request offers: `registry` and `specs` as they are
    /// when they fit in a quarter of the window; otherwise the kept tools, `find_tools`, and
    /// the tools found so far, with a registry that holds `find_tools`.
    pub(crate) fn offer(
        &mut self,
        registry: &Arc<ToolRegistry>,
        specs: &[ToolSpec],
    ) -> (Arc<ToolRegistry>, Vec<ToolSpec>) {
        let stale = self
            .plan
            .as_ref()
            .is_none_or(|plan| !Arc::ptr_eq(&plan.base, registry));
        if stale {
            let found = self
                .plan
                .as_ref()
                .map(|plan| plan.finder.found())
                .unwrap_or_default();
            self.plan = plan(registry, specs, self.window, self.counts);
            if let Some(plan) = &self.plan {
                plan.finder.remember(found);
            }
        }
        match &self.plan {
            None => (Arc::clone(registry), specs.to_vec()),
            Some(plan) => {
                let mut offered = plan.kept.clone();
                offered.extend(
                    plan.finder
                        .found()
                        .iter()
                        .filter_map(|name| plan.held.get(name).cloned()),
                );
                (Arc::clone(&plan.registry), offered)
            }
        }
    }
}

/// What to hold back of `specs`, when they take more than their share of `window`.
fn plan(
    registry: &Arc<ToolRegistry>,
    specs: &[ToolSpec],
    window: u32,
    counts: &BTreeMap<String, u64>,
) -> Option<Plan> {
    let share = window / TOOLS_SHARE;
    if estimate_tools(specs) <= share {
        return None;
    }
    let is_mcp = |spec: &ToolSpec| {
        registry
            .get(&spec.name)
            .is_some_and(|tool| match tool.source() {
                ToolSource::Mcp { .. } => true,
                ToolSource::Builtin => false,
            })
    };
    let (mcp, mut kept): (Vec<&ToolSpec>, Vec<&ToolSpec>) =
        specs.iter().partition(|spec| is_mcp(spec));
    let mut used: Vec<&ToolSpec> = mcp
        .iter()
        .copied()
        .filter(|spec| counts.get(&spec.name).copied().unwrap_or(0) > 0)
        .collect();
    // Most used first; ties by name, so the same record gives the same request.
    used.sort_by(|a, b| {
        let count = |spec: &ToolSpec| counts.get(&spec.name).copied().unwrap_or(0);
        count(b).cmp(&count(a)).then_with(|| a.name.cmp(&b.name))
    });
    let finder_spec = FindTools::new(Vec::new()).spec().clone();
    for spec in used {
        let mut trial: Vec<ToolSpec> = kept.iter().map(|spec| (*spec).clone()).collect();
        trial.push(spec.clone());
        trial.push(finder_spec.clone());
        if estimate_tools(&trial) > share {
            break;
        }
        kept.push(spec);
    }
    let kept_names: Vec<&str> = kept.iter().map(|spec| spec.name.as_str()).collect();
    let held: Vec<ToolSpec> = mcp
        .into_iter()
        .filter(|spec| !kept_names.contains(&spec.name.as_str()))
        .cloned()
        .collect();
    if held.is_empty() {
        return None;
    }
    let finder = Arc::new(FindTools::new(held.clone()));
    let with_finder = registry
        .with_extra(Arc::clone(&finder) as Arc<dyn Tool>)
        .ok()?;
    // The request's order: as the registry sorts them, `find_tools` last.
    let mut kept: Vec<ToolSpec> = specs
        .iter()
        .filter(|spec| kept_names.contains(&spec.name.as_str()))
        .cloned()
        .collect();
    kept.push(finder.spec().clone());
    Some(Plan {
        base: Arc::clone(registry),
        registry: Arc::new(with_finder),
        kept,
        held: held
            .into_iter()
            .map(|spec| (spec.name.clone(), spec))
            .collect(),
        finder,
    })
}
