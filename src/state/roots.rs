//! The project roots Neovim last reported, kept until Lua says they may have
//! changed (`roots_changed`: the cwd moved, a language server attached or
//! left, workspace folders changed), so an MCP tool call checks its
//! `projectPath` without a round trip into Neovim.

use std::sync::Mutex;

use crate::nvim::seam::ProjectRoots;

#[derive(Default)]
pub struct RootsCache {
    inner: Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    /// Bumped by every `roots_changed`.
    generation: u64,
    roots: Option<ProjectRoots>,
}

impl RootsCache {
    /// The kept roots, or the generation to hand to [`RootsCache::store`]
    /// with roots read from Neovim now.
    pub fn get(&self) -> Result<ProjectRoots, u64> {
        let cached = crate::mutex::lock(&self.inner);
        cached.roots.clone().ok_or(cached.generation)
    }

    /// Keeps `roots` read during `generation`, unless they changed meanwhile.
    pub fn store(&self, generation: u64, roots: ProjectRoots) {
        let mut cached = crate::mutex::lock(&self.inner);
        if cached.generation == generation {
            cached.roots = Some(roots);
        }
    }

    pub fn invalidate(&self) {
        let mut cached = crate::mutex::lock(&self.inner);
        cached.generation += 1;
        cached.roots = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(cwd: &str) -> ProjectRoots {
        ProjectRoots {
            cwd: cwd.into(),
            folders: vec![],
        }
    }

    #[test]
    fn roots_read_before_a_change_are_not_kept_after_it() {
        let cache = RootsCache::default();
        let generation = cache.get().unwrap_err();
        cache.store(generation, roots("/a"));
        assert_eq!(cache.get().unwrap().cwd, "/a");

        cache.invalidate();
        let generation = cache.get().unwrap_err();
        cache.invalidate();
        cache.store(generation, roots("/stale"));
        assert!(cache.get().is_err(), "read before the change: not kept");
    }
}
