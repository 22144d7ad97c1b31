//! Whose server a loopback connection reached. opencode's port was free
//! when Lua chose it, but until opencode listens (and after it exits) any
//! local user can take it: the password goes only to a server of this
//! user. On Linux the kernel's socket tables (`/proc/net/tcp`, `tcp6`) say
//! which user owns the server's end of the very connection made (a socket
//! accepted, or still being accepted, carries its listener's owner), so
//! nothing can change hands between the check and the request. Elsewhere
//! there is no such table to read, and the check is not made.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::net::TcpStream;

/// Ok when the server end of `stream` belongs to this user.
pub async fn check(stream: &TcpStream) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: geteuid cannot fail and touches no memory.
        let uid = unsafe { libc::geteuid() };
        check_owner(stream, uid).await
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = stream;
        Ok(())
    }
}

/// Ok when the server end of `stream` belongs to user `uid`.
#[cfg(target_os = "linux")]
async fn check_owner(stream: &TcpStream, uid: u32) -> Result<(), String> {
    let (ours, theirs) = (
        stream.local_addr().map_err(|e| e.to_string())?,
        stream.peer_addr().map_err(|e| e.to_string())?,
    );
    let mut owner = None;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(rows) = tokio::fs::read_to_string(table).await else {
            continue;
        };
        owner = owner.or_else(|| owner_of(&rows, theirs, ours));
    }
    match owner {
        Some(owner) if owner == uid => Ok(()),
        Some(_) => Err(format!(
            "port {} is served by another user: opencode's password is not sent there",
            theirs.port()
        )),
        None => Err(format!(
            "cannot tell who serves port {}: opencode's password is not sent there",
            theirs.port()
        )),
    }
}

/// The owner (uid) of the socket at `local` connected to `remote`, from
/// the rows of `/proc/net/tcp` or `/proc/net/tcp6`.
fn owner_of(rows: &str, local: SocketAddr, remote: SocketAddr) -> Option<u32> {
    let (local, remote) = (plain(local), plain(remote));
    rows.lines().skip(1).find_map(|row| {
        let fields: Vec<&str> = row.split_whitespace().collect();
        let (at, to, uid) = (fields.get(1)?, fields.get(2)?, fields.get(7)?);
        (address(at)? == local && address(to)? == remote)
            .then(|| uid.parse().ok())
            .flatten()
    })
}

/// An IPv4 address mapped into IPv6 (a dual-stack socket) as IPv4.
fn plain(address: SocketAddr) -> SocketAddr {
    match address.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), address.port()),
            None => address,
        },
        IpAddr::V4(_) => address,
    }
}

/// `0100007F:1F90`: the address as the kernel holds it (32-bit words in
/// the machine's byte order), in hex, and the port.
fn address(field: &str) -> Option<SocketAddr> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = ip.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(plain(SocketAddr::new(ip, port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `address` as `/proc/net/tcp` writes it.
    fn field(address: SocketAddr) -> String {
        let hex = |bytes: &[u8]| -> String {
            bytes
                .chunks(4)
                .map(|word| format!("{:08X}", u32::from_ne_bytes(word.try_into().unwrap())))
                .collect()
        };
        let ip = match address.ip() {
            IpAddr::V4(v4) => hex(&v4.octets()),
            IpAddr::V6(v6) => hex(&v6.octets()),
        };
        format!("{ip}:{:04X}", address.port())
    }

    fn row(local: SocketAddr, remote: SocketAddr, state: &str, uid: u32) -> String {
        format!(
            "   3: {} {} {state} 00000000:00000000 00:00000000 00000000  {uid}        0 123456 1 0000000000000000 20 4 30 10 -1",
            field(local),
            field(remote)
        )
    }

    #[test]
    fn the_owner_of_a_connections_server_end_is_read_from_the_kernels_rows() {
        let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
        let server: SocketAddr = "127.0.0.1:4096".parse().unwrap();
        let client: SocketAddr = "127.0.0.1:51000".parse().unwrap();
        let other: SocketAddr = "127.0.0.1:51001".parse().unwrap();
        let rows = [
            header.to_owned(),
            row(server, "0.0.0.0:0".parse().unwrap(), "0A", 1000),
            row(server, other, "01", 1001),
            row(server, client, "01", 65534),
            row(client, server, "01", 1000),
        ]
        .join("\n");
        assert_eq!(owner_of(&rows, server, client), Some(65534));
        assert_eq!(owner_of(&rows, server, other), Some(1001));
        assert_eq!(owner_of(&rows, client, server), Some(1000));
        assert_eq!(
            owner_of(&rows, server, "127.0.0.1:1".parse().unwrap()),
            None
        );
        // A dual-stack socket's row names the IPv4 address mapped.
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:4096".parse().unwrap();
        let v6 = [header.to_owned(), row(mapped, client, "01", 42)].join("\n");
        assert_eq!(owner_of(&v6, server, client), Some(42));
        assert_eq!(
            address("0100007F:1F90").filter(|_| cfg!(target_endian = "little")),
            cfg!(target_endian = "little").then(|| "127.0.0.1:8080".parse().unwrap())
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_connection_to_a_listener_of_this_user_passes_and_of_another_does_not() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        // SAFETY: geteuid cannot fail and touches no memory.
        let uid = unsafe { libc::geteuid() };
        assert_eq!(check_owner(&stream, uid).await, Ok(()));
        let refused = check_owner(&stream, uid.wrapping_add(1)).await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|why| why.contains("another user")),
            "{refused:?}"
        );
        // Accepted too: the row is the accepted socket's.
        let _accepted = listener.accept().await.unwrap();
        assert_eq!(check(&stream).await, Ok(()));
    }
}
