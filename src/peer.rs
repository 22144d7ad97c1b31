//! Which local process is at the other end of a loopback TCP connection,
//! so an agent started in Neovim's terminal can be told apart from one
//! started elsewhere (pi says nothing about itself; Claude sends its pid).
//! Linux reads `/proc`; elsewhere the answer is unknown.

use std::net::SocketAddr;

/// Both ends of a loopback TCP connection, kept so the process at the
/// client's end can be looked up later, only when it matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connection {
    /// The client's end.
    pub peer: SocketAddr,
    /// Ours.
    pub local: SocketAddr,
}

impl Connection {
    /// The pid at the client's end while the connection is open, looked up
    /// off the event loop (it reads `/proc`).
    pub async fn pid(self) -> Option<u32> {
        crate::task::spawn_blocking(move || pid_of(self.peer, self.local))
            .await
            .ok()
            .flatten()
    }
}

/// The pid owning the client socket of the connection `peer` → `local`.
/// Reads `/proc/net/tcp*` and the fds of the processes we may read.
#[cfg(target_os = "linux")]
pub fn pid_of(peer: SocketAddr, local: SocketAddr) -> Option<u32> {
    let inode = socket_inode(peer, local)?;
    let wanted = format!("socket:[{inode}]");
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|link| link.as_os_str() == wanted.as_str()) {
                return Some(pid);
            }
        }
    }
    None
}

#[cfg(not(target_os = "linux"))]
pub fn pid_of(_peer: SocketAddr, _local: SocketAddr) -> Option<u32> {
    None
}

/// The inode of the client's socket: the line of `/proc/net/tcp` whose
/// local address is `peer` and remote address `local`.
#[cfg(target_os = "linux")]
fn socket_inode(peer: SocketAddr, local: SocketAddr) -> Option<u64> {
    let table = match peer {
        SocketAddr::V4(_) => "/proc/net/tcp",
        SocketAddr::V6(_) => "/proc/net/tcp6",
    };
    let text = std::fs::read_to_string(table).ok()?;
    let (from, to) = (hex_address(peer), hex_address(local));
    text.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(1)? == &from && fields.get(2)? == &to)
            .then(|| fields.get(9)?.parse().ok())
            .flatten()
    })
}

/// An address as `/proc/net/tcp` writes it: the IP's bytes in host order
/// as hex words, then the port.
#[cfg(target_os = "linux")]
fn hex_address(address: SocketAddr) -> String {
    let ip: String = match address {
        SocketAddr::V4(v4) => format!("{:08X}", u32::from_ne_bytes(v4.ip().octets())),
        SocketAddr::V6(v6) => v6
            .ip()
            .octets()
            .chunks(4)
            .map(|word| format!("{:08X}", u32::from_ne_bytes(word.try_into().unwrap())))
            .collect(),
    };
    format!("{ip}:{:04X}", address.port())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_client_of_a_loopback_connection_is_this_process() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let local = server.local_addr().unwrap();
        assert_eq!(pid_of(peer, local), Some(std::process::id()));
        let elsewhere: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(pid_of(elsewhere, local), None);
    }
}
