//! Network use beyond the HTTP clients: raw sockets (`connect`, `sendto`, `create_connection`),
//! `http.client`, `ftplib`, `smtplib`, `telnetlib`, `paramiko`, `xmlrpc`, with the host and port
//! resolved as far as constants go.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use crate::effects::{is_url, url_host, Direction};

use super::walk::*;

/// Objects a constructor call stands for, so that methods on them resolve
/// (`s = socket.socket(); s.connect(...)` is `socket.Socket.connect`).
pub(super) fn constructed(q: &str) -> Option<&'static str> {
    Some(match q {
        "socket.socket" | "socket.create_connection" | "socket.fromfd" => "socket.Socket",
        "requests.Session" | "requests.session" => "requests",
        "httpx.Client" | "httpx.AsyncClient" => "httpx",
        "aiohttp.ClientSession" => "aiohttp",
        "urllib3.PoolManager" | "urllib3.HTTPConnectionPool" | "urllib3.HTTPSConnectionPool" => {
            "urllib3"
        }
        "paramiko.SSHClient" => "paramiko.SSHClient",
        "paramiko.Transport" => "paramiko.Transport",
        "ftplib.FTP" | "ftplib.FTP_TLS" => "ftplib.FTP",
        "smtplib.SMTP" | "smtplib.SMTP_SSL" => "smtplib.SMTP",
        "http.client.HTTPConnection" | "http.client.HTTPSConnection" => "http.client.Connection",
        "psutil.Process" => "psutil.Process",
        _ => return None,
    })
}

impl<'t, 's: 't> Py<'_, 's> {
    /// The network effect of `q(...)`, for the clients `http_call` does not cover.
    pub(super) fn net_call(&mut self, q: &str, c: &'t ExprCall, args: &Args<'t>) {
        let p0 = args.positional.first().copied();
        let (addr, default_port, direction) = match q {
            "socket.Socket.connect" | "socket.Socket.connect_ex" | "socket.create_connection" => (
                p0.or_else(|| args.keyword("address")),
                None,
                Direction::Both,
            ),
            "socket.Socket.sendto" => (
                args.positional
                    .last()
                    .copied()
                    .filter(|_| args.positional.len() >= 2),
                None,
                Direction::Upload,
            ),
            "socket.Socket.bind" | "socket.create_server" => (p0, None, Direction::Both),
            "http.client.HTTPConnection" => (
                p0.or_else(|| args.keyword("host")),
                Some(80),
                Direction::Download,
            ),
            "http.client.HTTPSConnection" => (
                p0.or_else(|| args.keyword("host")),
                Some(443),
                Direction::Download,
            ),
            "ftplib.FTP" | "ftplib.FTP_TLS" if p0.is_some() => (p0, Some(21), Direction::Both),
            "ftplib.FTP.connect" => (p0, Some(21), Direction::Both),
            "smtplib.SMTP" | "smtplib.SMTP_SSL" if p0.is_some() => {
                (p0, Some(25), Direction::Upload)
            }
            "smtplib.SMTP.connect" => (p0, Some(25), Direction::Upload),
            "telnetlib.Telnet" if p0.is_some() => (p0, Some(23), Direction::Both),
            "paramiko.SSHClient.connect" => (
                p0.or_else(|| args.keyword("hostname")),
                Some(22),
                Direction::Both,
            ),
            "paramiko.Transport" => (p0, Some(22), Direction::Both),
            "xmlrpc.client.ServerProxy" | "websocket.create_connection" | "websockets.connect" => {
                (p0, None, Direction::Both)
            }
            _ => return,
        };
        let (host, port) = match addr {
            Some(Expr::Tuple(t)) if t.elts.len() >= 2 => (
                self.text_value(&t.elts[0]),
                port_value(&t.elts[1]).or(default_port),
            ),
            Some(a) => match self.text_value(a) {
                Some(v) if is_url(&v) => {
                    let (h, p) = url_host(&v);
                    (h, p.or(default_port))
                }
                Some(v) => (
                    Some(v.to_ascii_lowercase()),
                    args.positional
                        .get(1)
                        .and_then(|p| port_value(p))
                        .or_else(|| args.keyword("port").and_then(port_value))
                        .or(default_port),
                ),
                None => (None, default_port),
            },
            None => (None, default_port),
        };
        let host = host.map(|h| {
            if h.is_empty() {
                "0.0.0.0".to_owned()
            } else {
                h
            }
        });
        let at = self.at(c.range());
        let ev = self.text(c.range()).to_owned();
        self.sink
            .network(None, host, port, direction, None, at, &ev);
    }
}

fn port_value(e: &Expr) -> Option<u16> {
    super::alloc::int_value(e, 0).and_then(|p| u16::try_from(p).ok())
}
