//! Archives and compressors: `tar`, `gzip`/`bzip2`/`xz` and their inverses, `zip`.

use crate::effects::{EffectKind, EffectTarget};
use crate::judge::join_norm;

use super::cmd::Cmd;
use super::files::{is_short_flag, operands_of};
use super::text::Word;
use super::walk::{Bash, Inv};

/// `true` for the commands [`Bash::archive_command`] knows.
pub(super) fn is_archive_command(name: &str) -> bool {
    matches!(
        name,
        "tar" | "gzip" | "bzip2" | "xz" | "gunzip" | "bunzip2" | "unxz" | "zip"
    )
}

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// The effects of an archive command; `false` when `c` is not one.
    pub(super) fn archive_command(&mut self, c: &Cmd<'_, 't>) -> bool {
        let (inv, name, at, ev) = (c.inv, c.name, c.at, c.ev);
        let (vals, operands) = (&c.vals, &c.operands);
        match name {
            "tar" => self.tar_effects(inv, at, ev),
            "gzip" | "bzip2" | "xz" | "gunzip" | "bunzip2" | "unxz" => {
                self.compress_effects(name, vals, operands, at, ev);
            }
            "zip" => {
                // `zip ARCHIVE FILE...`: the archive is written, the files read.
                let operands = operands_of(name, &inv.args);
                if let Some((archive, files)) = operands.split_first() {
                    self.file_effect(EffectKind::FileWrite, archive, at, ev);
                    for w in files {
                        self.file_effect(EffectKind::FileRead, w, at, ev);
                    }
                }
            }
            _ => return false,
        }
        true
    }

    /// `tar`: the archive written (`c`, `r`, `u`) or read (`x`, `t`), the files put in it (after
    /// `-C DIR`, relative to DIR), the directory an extraction writes to.
    fn tar_effects(&mut self, inv: &Inv<'t>, at: (u32, u32), ev: &str) {
        let args = &inv.args;
        let (mut mode, mut archive, mut dir) = (None, None::<EffectTarget>, None::<String>);
        let mut files: Vec<EffectTarget> = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let v = args[i].val();
            let bundle = if i == 0 && !v.starts_with('-') {
                Some(v)
            } else if v.starts_with('-') && !v.starts_with("--") {
                Some(&v[1..])
            } else {
                None
            };
            if let Some(b) = bundle.filter(|b| b.chars().all(|c| c.is_ascii_alphabetic())) {
                for c in b.chars() {
                    if matches!(c, 'c' | 'x' | 't' | 'r' | 'u') {
                        mode = Some(c);
                    }
                }
                // Options that take a value take the next words, in order (`-cf A`, `-C D`).
                for c in b.chars().filter(|c| matches!(c, 'f' | 'C')) {
                    i += 1;
                    let Some(w) = args.get(i) else { break };
                    if c == 'f' {
                        archive = Some(self.path_target(w));
                    } else {
                        dir = w.lit.clone();
                    }
                }
            } else if let Some(a) = v.strip_prefix("--file=") {
                archive = Some(self.str_target(a));
            } else if let Some(d) = v.strip_prefix("--directory=") {
                dir = Some(d.to_owned());
            } else if let Some(m) = v.strip_prefix("--") {
                match m {
                    "create" => mode = Some('c'),
                    "extract" | "get" => mode = Some('x'),
                    "list" => mode = Some('t'),
                    "append" => mode = Some('r'),
                    _ => {}
                }
            } else if !v.starts_with('-') {
                files.push(match (&dir, args[i].lit.as_deref()) {
                    (Some(d), Some(f)) if !f.starts_with(['/', '~']) => {
                        self.str_target(&join_norm(d, f))
                    }
                    (None, _) => self.path_target(&args[i]),
                    _ => self.path_target(&args[i]),
                });
            }
            i += 1;
        }
        let archive = archive.filter(|a| a.values() != ["-"]);
        match mode {
            Some('c' | 'r' | 'u') => {
                if let Some(a) = archive {
                    self.sink.effect(EffectKind::FileWrite, a, at, ev);
                }
                for f in files {
                    self.sink.effect(EffectKind::FileRead, f, at, ev);
                }
            }
            Some('x') => {
                if let Some(a) = archive {
                    self.sink.effect(EffectKind::FileRead, a, at, ev);
                }
                let to = dir.map_or_else(|| self.str_target("."), |d| self.str_target(&d));
                self.sink.effect(EffectKind::FileWrite, to, at, ev);
            }
            _ => {
                if let Some(a) = archive {
                    self.sink.effect(EffectKind::FileRead, a, at, ev);
                }
            }
        }
    }

    /// `gzip FILE` reads FILE and writes `FILE.gz` (and removes FILE unless `-k`); `-d` the other
    /// way round; `-c` writes to the standard output.
    fn compress_effects(
        &mut self,
        name: &str,
        vals: &[&str],
        operands: &[&Word<'t>],
        at: (u32, u32),
        ev: &str,
    ) {
        let flag = |c: char, long: &str| vals.iter().any(|v| *v == long || is_short_flag(v, c));
        let decompress = name.starts_with("gun")
            || name.starts_with("bun")
            || name == "unxz"
            || flag('d', "--decompress");
        let to_stdout = flag('c', "--stdout") || flag('t', "--test") || flag('l', "--list");
        let keep = flag('k', "--keep");
        let ext = match name {
            "bzip2" | "bunzip2" => ".bz2",
            "xz" | "unxz" => ".xz",
            _ => ".gz",
        };
        for w in operands {
            self.file_effect(EffectKind::FileRead, w, at, ev);
            if to_stdout {
                continue;
            }
            let Some(v) = w.lit.as_deref() else { continue };
            let out = if decompress {
                v.strip_suffix(ext)
                    .or_else(|| v.strip_suffix(".tgz"))
                    .map(str::to_owned)
            } else {
                Some(format!("{v}{ext}"))
            };
            if let Some(o) = out {
                let t = self.str_target(&o);
                self.sink.effect(EffectKind::FileCreate, t, at, ev);
            }
            if !keep {
                self.file_effect(EffectKind::FileDelete, w, at, ev);
            }
        }
    }
}
