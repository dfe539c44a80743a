//! Deserialization: decoders that can run code while decoding (`pickle`, `marshal`, `shelve`,
//! `dill`, `jsonpickle`, `yaml.load` without a safe loader, `torch.load` without
//! `weights_only=True`, `numpy.load(allow_pickle=True)`), with where their data comes from.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use crate::catalog::{finding, id};
use crate::effects::{payload_runs_code, DataSource, EffectKind, EffectTarget};

use super::walk::*;

/// Decoders that run code from their input whatever the call says, by qualified name.
const CODE_DECODERS: &[&str] = &[
    "pickle.load",
    "pickle.loads",
    "pickle.Unpickler",
    "cPickle.load",
    "cPickle.loads",
    "_pickle.loads",
    "_pickle.load",
    "marshal.load",
    "marshal.loads",
    "shelve.open",
    "dill.load",
    "dill.loads",
    "cloudpickle.load",
    "cloudpickle.loads",
    "joblib.load",
    "pandas.read_pickle",
    "jsonpickle.decode",
    "jsonpickle.loads",
    "yaml.unsafe_load",
    "yaml.unsafe_load_all",
];

impl<'t, 's: 't> Py<'_, 's> {
    /// `true` when `q(...)` decodes with a code-running format: the call is reported, with a
    /// [`EffectKind::Deserialize`] effect naming the format and where the data comes from.
    pub(super) fn deserialize(&mut self, q: &str, c: &'t ExprCall, args: &Args<'t>) -> bool {
        let code_running = CODE_DECODERS.contains(&q)
            || match q {
                "yaml.load" | "yaml.load_all" => !args
                    .keyword("Loader")
                    .or_else(|| args.positional.get(1).copied())
                    .map(|v| self.text(v.range()))
                    .is_some_and(|l| l.ends_with("SafeLoader") || l.ends_with("BaseLoader")),
                "torch.load" => args
                    .keyword("weights_only")
                    .is_none_or(|v| self.text(v.range()) != "True"),
                "numpy.load" | "np.load" => args
                    .keyword("allow_pickle")
                    .is_some_and(|v| self.text(v.range()) == "True"),
                _ => false,
            };
        if !code_running {
            return false;
        }
        let ev = self.text(c.range());
        self.push(finding(id::PY_DESERIALIZE, ev), c.range());
        let data = args
            .positional
            .first()
            .copied()
            .or_else(|| args.keyword("data"))
            .or_else(|| args.keyword("file"))
            .or_else(|| args.keyword("stream"))
            .or_else(|| args.keyword("f"));
        let source = data.map_or(DataSource::Unknown, |d| self.data_source(d));
        let format = match q.split_once('.') {
            Some(("torch", _)) => "torch.load",
            Some(("_pickle" | "cPickle", _)) => "pickle",
            Some((m, _)) => m,
            None => q,
        }
        .to_owned();
        let target = match (source, data.and_then(|d| self.content_source(d, 0))) {
            (DataSource::File, Some(p)) if !p.is_empty() => EffectTarget::Resolved(p),
            _ => EffectTarget::Unknown,
        };
        let at = self.at(c.range());
        self.sink
            .effect(EffectKind::Deserialize { format, source }, target, at, ev);
        true
    }

    /// Where the data `e` handed to a decoder comes from.
    fn data_source(&self, e: &'t Expr) -> DataSource {
        if self.is_tainted(e) || self.reads_socket(e) {
            return DataSource::Network;
        }
        if let Some(p) = self.literal_payload(e) {
            return if payload_runs_code(&p) {
                DataSource::LiteralCode
            } else {
                DataSource::Literal
            };
        }
        let opened = match e {
            Expr::Name(n) => self.handles.contains_key(n.id.as_str()),
            _ => false,
        };
        if opened || self.content_source(e, 0).is_some() || self.opens_file(e) {
            return DataSource::File;
        }
        DataSource::Unknown
    }

    /// The payload `e` spells in the script: a literal, or a constant built from literals.
    fn literal_payload(&self, e: &'t Expr) -> Option<String> {
        match e {
            Expr::BytesLiteral(b) => {
                let bytes: Vec<u8> = b.value.bytes().collect();
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
            Expr::StringLiteral(_) => self.string(e),
            Expr::Name(_) | Expr::Call(_) | Expr::BinOp(_) => self.text_value(e),
            _ => None,
        }
    }

    /// `open(p, 'rb')`, a `with open(...) as f` handle, `Path(p).open()`.
    fn opens_file(&self, e: &'t Expr) -> bool {
        let Expr::Call(c) = e else { return false };
        let q = self.resolve(&c.func, 0).unwrap_or_default();
        matches!(
            q.as_str(),
            "open" | "io.open" | "gzip.open" | "bz2.open" | "lzma.open"
        ) || matches!(&*c.func, Expr::Attribute(a) if a.attr.as_str() == "open")
    }

    /// `s.recv(n)`, `s.recvfrom(n)`, `s.makefile().read()`, or a name bound to one: data read
    /// from a socket.
    pub(super) fn reads_socket(&self, e: &'t Expr) -> bool {
        match e {
            Expr::Call(c) => match &*c.func {
                Expr::Attribute(a) => {
                    matches!(
                        a.attr.as_str(),
                        "recv" | "recvfrom" | "recv_into" | "makefile"
                    ) && self
                        .resolve(&a.value, 0)
                        .is_some_and(|q| q == "socket.Socket")
                        || self.reads_socket(&a.value)
                }
                _ => false,
            },
            Expr::Name(n) => self.socket_data.contains(n.id.as_str()),
            _ => false,
        }
    }
}
