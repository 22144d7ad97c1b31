//! `:PiIde install`: a release's prebuilt binary comes from
//! `$PI_IDE_RELEASE_URL` (here a loopback server with the host binary this
//! test run built and its checksum), is checked and put in place with one
//! rename, and its version recorded; a bad checksum is refused and leaves
//! what was there; a checkout that is not the release, or a release that
//! cannot be reached, is built with cargo (a stand-in that records its
//! arguments) and the person is told why.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use crate::common::{Scratch, Session, host_binary, plugin_copy, repo_root, scratch_dir};
use crate::health::health_report;

/// How long an install may take on a loaded machine (it copies and hashes
/// the debug binary, ~140 MB).
const INSTALL_DEADLINE: Duration = Duration::from_secs(120);

/// A loopback HTTP server with fixed files: `GET <path>` answers 200 with
/// the bytes, anything else 404. Stops when dropped.
struct FakeRelease {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeRelease {
    fn serve(files: HashMap<String, Vec<u8>>) -> FakeRelease {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let (requests, stop) = (requests.clone(), stop.clone());
            move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        answer(stream, &files, &requests);
                    }
                }
            }
        });
        FakeRelease {
            addr,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}/releases", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FakeRelease {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn answer(stream: TcpStream, files: &HashMap<String, Vec<u8>>, requests: &Mutex<Vec<String>>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header.trim().is_empty() => break,
            Ok(_) => {}
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_owned();
    requests.lock().unwrap().push(path.clone());
    let mut stream = &stream;
    let _ = match files.get(&path) {
        Some(body) => stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .and_then(|()| stream.write_all(body)),
        None => stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    };
}

fn sha256_hex(path: &Path) -> String {
    let output = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(output.status.success(), "sha256sum {}", path.display());
    String::from_utf8(output.stdout).unwrap()[..64].to_owned()
}

/// A copy of the plugin with its Cargo.toml (the version it expects).
fn checkout(name: &str) -> Scratch {
    let copy = plugin_copy(name);
    std::fs::copy(repo_root().join("Cargo.toml"), copy.join("Cargo.toml")).unwrap();
    copy
}

/// A `cargo` that records its working directory and arguments in
/// `<dir>/cargo.log` and "builds" by linking the test's host binary into
/// `target/release/`.
fn fake_cargo(dir: &Path) -> PathBuf {
    let script = dir.join("cargo");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$(pwd -P)\" \"$@\" > '{log}'\nmkdir -p target/release\nln -sf '{bin}' target/release/pi-ide\n",
            log = dir.join("cargo.log").display(),
            bin = host_binary().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir.join("cargo.log")
}

/// Neovim with the plugin at `root`, set up without starting the host,
/// `$PI_IDE_RELEASE_URL` = `release_url` and a stand-in cargo first on PATH.
async fn session(root: &Path, release_url: &str, cargo_dir: &Path) -> Session {
    let session = Session::spawn_plugin(root).await;
    session
        .lua_with(
            "local url, dir = ...
             vim.env.PI_IDE_RELEASE_URL = url
             vim.env.PATH = dir .. ':' .. vim.env.PATH
             require('pi-ide').setup({ auto_start = false })",
            vec![release_url.into(), cargo_dir.display().to_string().into()],
        )
        .await;
    session
}

fn lua_string(value: Value) -> String {
    value.as_str().unwrap().to_owned()
}

/// Runs `:PiIde install` and waits for the install to end; returns what
/// the person was told.
async fn install(session: &Session) -> Vec<String> {
    session.exec("vim.cmd('PiIde install')").await;
    let deadline = tokio::time::Instant::now() + INSTALL_DEADLINE;
    loop {
        if session
            .lua("return require('pi-ide.install').running()")
            .await
            == false
        {
            return session.notifications().await;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the install did not end; told: {:?}",
            session.notifications().await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The release files for this machine: the test's host binary and its
/// checksum (or `checksum`, when given), under `/releases/v<version>/`.
async fn release_files(
    session: &Session,
    checksum: Option<&str>,
) -> (String, HashMap<String, Vec<u8>>) {
    let target = lua_string(
        session
            .lua("return require('pi-ide.install.release').target()")
            .await,
    );
    let version = lua_string(
        session
            .lua("return require('pi-ide.install.release').version(require('pi-ide.util').root())")
            .await,
    );
    let binary = std::fs::read(host_binary()).unwrap();
    let sum = checksum.map_or_else(|| sha256_hex(host_binary()), str::to_owned);
    let dir = format!("/releases/v{version}");
    let files = HashMap::from([
        (format!("{dir}/pi-ide-{target}"), binary),
        (
            format!("{dir}/pi-ide-{target}.sha256"),
            format!("{sum}  pi-ide-{target}\n").into_bytes(),
        ),
    ]);
    (target, files)
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn install_downloads_verifies_and_records_the_release_binary_which_then_runs() {
    let copy = checkout("install-download");
    let cargo_dir = scratch_dir("install-cargo");
    let cargo_log = fake_cargo(&cargo_dir);
    // Placeholder URL until the server knows the files.
    let session = session(&copy, "http://127.0.0.1:9/none", &cargo_dir).await;
    let (target, files) = release_files(&session, None).await;
    let server = FakeRelease::serve(files);
    session
        .lua_with(
            "vim.env.PI_IDE_RELEASE_URL = ...",
            vec![server.url().into()],
        )
        .await;

    let told = install(&session).await;
    let done = told.last().cloned().unwrap_or_default();
    assert!(done.contains("installed the prebuilt host"), "{told:?}");
    assert!(done.contains(&target), "{done}");
    assert!(!cargo_log.exists(), "cargo ran: {told:?}");

    let installed = copy.join("bin/pi-ide");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(host_binary()).unwrap(),
        "the installed binary is not the release's"
    );
    let mode = std::fs::metadata(&installed).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(leftovers(&copy.join("bin")), Vec::<String>::new());
    let record: Value =
        serde_json::from_slice(&std::fs::read(copy.join("bin/pi-ide.json")).unwrap()).unwrap();
    assert_eq!(record["source"], "download");
    assert_eq!(record["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(record["target"], target.as_str());
    assert_eq!(record["sha256"], sha256_hex(host_binary()).as_str());
    assert!(
        server.requests().iter().any(|p| p.ends_with(".sha256")),
        "{:?}",
        server.requests()
    );

    // The downloaded binary is the one that runs, and health says where it came from.
    let bin = session.lua("return require('pi-ide.host').binary()").await;
    assert_eq!(bin.as_str(), Some(installed.to_str().unwrap()));
    let report = health_report(&session).await;
    assert!(
        report.contains(&format!(
            "downloaded v{} for {target}",
            env!("CARGO_PKG_VERSION")
        )),
        "{report}"
    );
    session.exec("require('pi-ide').start()").await;
    let (port, _) = session.lockfile().await;
    assert_ne!(port, 0);
}

#[tokio::test]
async fn a_wrong_checksum_is_refused_and_the_binary_there_is_kept() {
    let copy = checkout("install-checksum");
    let cargo_dir = scratch_dir("install-cargo");
    let cargo_log = fake_cargo(&cargo_dir);
    let session = session(&copy, "http://127.0.0.1:9/none", &cargo_dir).await;
    let wrong = "0".repeat(64);
    let (_, files) = release_files(&session, Some(&wrong)).await;
    let server = FakeRelease::serve(files);
    session
        .lua_with(
            "vim.env.PI_IDE_RELEASE_URL = ...",
            vec![server.url().into()],
        )
        .await;
    let earlier = copy.join("bin/pi-ide");
    std::fs::create_dir_all(earlier.parent().unwrap()).unwrap();
    std::fs::write(&earlier, "the binary installed before").unwrap();

    let told = install(&session).await;
    let refused = told
        .iter()
        .find(|m| m.contains("building from source"))
        .unwrap_or_else(|| panic!("no fallback to cargo: {told:?}"));
    assert!(
        refused.contains("SHA-256") && refused.contains("refused") && refused.contains(&wrong),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(&earlier).unwrap(),
        "the binary installed before"
    );
    assert_eq!(leftovers(&copy.join("bin")), Vec::<String>::new());
    assert!(!copy.join("bin/pi-ide.json").exists());
    // The stand-in cargo built it instead.
    let ran = std::fs::read_to_string(&cargo_log).unwrap();
    assert!(ran.contains("build\n--release\n--locked"), "{ran}");
}

#[tokio::test]
async fn an_unreachable_release_falls_back_to_cargo_and_says_why() {
    let copy = checkout("install-offline");
    let cargo_dir = scratch_dir("install-cargo");
    let cargo_log = fake_cargo(&cargo_dir);
    // A port nothing listens on.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let session = session(&copy, &format!("http://{closed}/releases"), &cargo_dir).await;

    let told = install(&session).await;
    let building = told
        .iter()
        .find(|m| m.contains("building from source"))
        .unwrap_or_else(|| panic!("no fallback to cargo: {told:?}"));
    assert!(
        building.contains("cannot download") && building.contains(&closed.to_string()),
        "{building}"
    );
    let done = told.last().cloned().unwrap_or_default();
    assert!(done.contains("built the host from source"), "{told:?}");
    let ran = std::fs::read_to_string(&cargo_log).unwrap();
    let mut lines = ran.lines();
    assert_eq!(
        lines.next().map(Path::new),
        Some(copy.canonicalize().unwrap().as_path())
    );
    assert_eq!(
        lines.collect::<Vec<_>>(),
        ["build", "--release", "--locked"]
    );

    let built = copy.join("target/release/pi-ide");
    let record: Value =
        serde_json::from_slice(&std::fs::read(copy.join("target/release/pi-ide.json")).unwrap())
            .unwrap();
    assert_eq!(record["source"], "cargo");
    assert!(
        record["reason"]
            .as_str()
            .is_some_and(|r| r.contains("cannot download")),
        "{record}"
    );
    let bin = session.lua("return require('pi-ide.host').binary()").await;
    assert_eq!(bin.as_str(), Some(built.to_str().unwrap()));
    assert!(!copy.join("bin/pi-ide").exists());
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {status:?}");
}

#[tokio::test]
async fn only_a_checkout_at_the_release_tag_downloads() {
    let copy = checkout("install-tag");
    git(&copy, &["init", "-q"]);
    git(&copy, &["add", "-A"]);
    git(&copy, &["commit", "-q", "-m", "a commit after the release"]);
    let cargo_dir = scratch_dir("install-cargo");
    let cargo_log = fake_cargo(&cargo_dir);
    let session = session(&copy, "http://127.0.0.1:9/none", &cargo_dir).await;
    let (_, files) = release_files(&session, None).await;
    let server = FakeRelease::serve(files);
    session
        .lua_with(
            "vim.env.PI_IDE_RELEASE_URL = ...",
            vec![server.url().into()],
        )
        .await;

    // No tag: built from source, the release is not even asked.
    let told = install(&session).await;
    let building = told
        .iter()
        .find(|m| m.contains("building from source"))
        .unwrap_or_else(|| panic!("no fallback to cargo: {told:?}"));
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert!(
        building.contains("not at release tag") && building.contains(&tag),
        "{building}"
    );
    assert!(cargo_log.exists());
    assert_eq!(server.requests(), Vec::<String>::new());

    // Tagged: downloaded.
    git(&copy, &["tag", &tag]);
    session.exec("_G.notified = {}").await;
    let told = install(&session).await;
    let done = told.last().cloned().unwrap_or_default();
    assert!(done.contains("installed the prebuilt host"), "{told:?}");
}
