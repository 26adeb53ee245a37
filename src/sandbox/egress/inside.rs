//! Sockets and commands *inside* an attempt's network namespace, owned by the harness.
//!
//! A socket belongs to the network namespace it was created in, whichever process later holds
//! its descriptor. So the harness creates a socket from a context that has entered the
//! namespace, takes the descriptor back and serves it from its own threads, outside the
//! attempt's PID namespace (an agent can neither see nor kill them).
//!
//! Two ways in, chosen by who owns the namespace:
//!
//! - **the harness's own user namespace owns it** (medin runs as root: the holder creates no
//!   user namespace): a short-lived thread `setns`es into the network namespace (namespaces
//!   are per thread on Linux), creates the sockets and ends; the descriptors outlive it.
//! - **a user namespace of the holder owns it** (medin is not root): a thread cannot join a
//!   user namespace (a multi-threaded process may not), and `setns` into the network namespace
//!   alone needs `CAP_SYS_ADMIN` in the harness's own user namespace, which it lacks. A forked
//!   child (one thread) joins the holder's user namespace — where the harness's user, its
//!   owner, holds every capability — then the network namespace, creates the sockets with
//!   raw, async-signal-safe syscalls on values prepared before the fork, and passes them back
//!   over a socket pair with `SCM_RIGHTS`.
//!
//! The owner is read from the namespace's descriptor itself (`NS_GET_USERNS`), so callers pass
//! only the network namespace. Commands (`ip`, `nft`) run inside the same way from the forked
//! child `std::process::Command` makes (its `pre_exec` joins the namespaces before the exec).

use std::io;
use std::mem;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `NS_GET_USERNS` (`_IO(0xb7, 0x1)`): a descriptor of the user namespace owning a namespace.
const NS_GET_USERNS: libc::c_ulong = 0xb701;

/// At most this many sockets are made in one trip into the namespace.
const MAX_SOCKETS: usize = 8;

/// Binds a TCP listener at `addr` inside the network namespace `net` and returns it, to be
/// served from any thread of the harness (see the module documentation for how). The listener
/// is close-on-exec and has `SO_REUSEADDR`; port 0 picks a free port of that namespace
/// (`local_addr` says which).
pub fn bind_inside(net: BorrowedFd<'_>, addr: SocketAddr) -> io::Result<TcpListener> {
    let mut fds = Namespace::of(net)?.open(&[InsideSocket::TcpListener(addr)])?;
    let fd = fds
        .pop()
        .ok_or_else(|| io::Error::other("the network namespace returned no socket"))?;
    Ok(TcpListener::from(fd))
}

/// One socket to make inside the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InsideSocket {
    /// A listening TCP socket at this address.
    TcpListener(SocketAddr),
    /// A UDP socket bound at this address.
    Udp(SocketAddr),
    /// A netfilter netlink socket (`NETLINK_NETFILTER`), to receive the namespace's NFLOG.
    NetfilterNetlink,
}

/// A network namespace to enter, with the user namespace to enter first when the harness's
/// own does not own it.
pub(super) struct Namespace<'a> {
    net: BorrowedFd<'a>,
    /// `Some` when a user namespace other than the harness's owns `net` (harness not root).
    owner: Option<OwnedFd>,
}

impl<'a> Namespace<'a> {
    /// The namespace `net`, with its owner when that is not the harness's user namespace.
    pub(super) fn of(net: BorrowedFd<'a>) -> io::Result<Namespace<'a>> {
        // SAFETY: an ioctl on a descriptor the caller lends; it returns a new descriptor or -1.
        let owner = unsafe { libc::ioctl(net.as_raw_fd(), NS_GET_USERNS as _) };
        if owner < 0 {
            // Kernels before 4.9 cannot say: a thread's setns is the only way there.
            return Ok(Namespace { net, owner: None });
        }
        // SAFETY: the kernel just returned this descriptor to us alone.
        let owner = unsafe { OwnedFd::from_raw_fd(owner) };
        let ours = std::fs::metadata("/proc/self/ns/user")?;
        let theirs = file_identity(owner.as_raw_fd())?;
        use std::os::unix::fs::MetadataExt;
        let same = (ours.dev(), ours.ino()) == theirs;
        Ok(Namespace {
            net,
            owner: (!same).then_some(owner),
        })
    }

    /// Whether entering needs the forked child (a user namespace of the holder owns it).
    #[cfg(test)]
    pub(super) fn needs_user_namespace(&self) -> bool {
        self.owner.is_some()
    }

    /// Makes `wanted` inside the namespace, in order.
    pub(super) fn open(&self, wanted: &[InsideSocket]) -> io::Result<Vec<OwnedFd>> {
        self.open_via(wanted, self.owner.is_some())
    }

    /// [`Namespace::open`], by the forked child when `fork` (also usable when not needed, so
    /// tests exercise that path as root).
    pub(super) fn open_via(&self, wanted: &[InsideSocket], fork: bool) -> io::Result<Vec<OwnedFd>> {
        if wanted.len() > MAX_SOCKETS {
            return Err(io::Error::other(format!(
                "at most {MAX_SOCKETS} sockets can be made inside at once, {} were asked for",
                wanted.len()
            )));
        }
        let specs: Vec<RawSpec> = wanted.iter().map(|w| RawSpec::from(*w)).collect();
        if fork {
            open_by_child(
                self.owner.as_ref().map(AsRawFd::as_raw_fd),
                self.net.as_raw_fd(),
                &specs,
            )
        } else {
            open_by_thread(self.net.as_raw_fd(), &specs)
        }
    }

    /// Runs `program args` inside the namespace with `stdin` as its input, and waits for it.
    pub(super) fn run(&self, program: &Path, args: &[&str], stdin: &[u8]) -> io::Result<Output> {
        let user = self.owner.as_ref().map_or(-1, AsRawFd::as_raw_fd);
        let net = self.net.as_raw_fd();
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .env("PATH", super::super::SANDBOX_PATH)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: the closure runs in the forked child before exec and calls setns only
        // (async-signal-safe) on descriptors that stay open until the exec.
        unsafe {
            cmd.pre_exec(move || enter(user, net).map_err(io::Error::from_raw_os_error));
        }
        let mut child = cmd.spawn()?;
        if let Some(mut input) = child.stdin.take() {
            use std::io::Write;
            input.write_all(stdin)?;
        }
        child.wait_with_output()
    }
}

/// The (device, inode) of an open descriptor.
fn file_identity(fd: RawFd) -> io::Result<(u64, u64)> {
    // SAFETY: fstat fills a zeroed struct we own.
    let mut st: libc::stat = unsafe { mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.st_dev, st.st_ino))
}

/// Joins `user` (when not -1) then `net`. Async-signal-safe; the error is an errno.
fn enter(user: RawFd, net: RawFd) -> Result<(), i32> {
    // SAFETY: setns on descriptors the caller keeps open; it only changes this thread's (or
    // this single-threaded child's) namespaces.
    unsafe {
        if user >= 0 && libc::setns(user, libc::CLONE_NEWUSER) != 0 {
            return Err(errno());
        }
        if libc::setns(net, libc::CLONE_NEWNET) != 0 {
            return Err(errno());
        }
    }
    Ok(())
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// A socket to make, as raw values computed before entering (the forked child only copies).
#[derive(Clone, Copy)]
struct RawSpec {
    domain: libc::c_int,
    kind: libc::c_int,
    protocol: libc::c_int,
    /// The address to bind, unless `addr_len` is 0.
    addr: libc::sockaddr_storage,
    addr_len: libc::socklen_t,
    listen: bool,
}

impl From<InsideSocket> for RawSpec {
    fn from(want: InsideSocket) -> RawSpec {
        let (domain, kind, protocol, addr, listen) = match want {
            InsideSocket::TcpListener(a) => (family(&a), libc::SOCK_STREAM, 0, Some(a), true),
            InsideSocket::Udp(a) => (family(&a), libc::SOCK_DGRAM, 0, Some(a), false),
            InsideSocket::NetfilterNetlink => (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_NETFILTER, None, false),
        };
        // SAFETY: sockaddr_storage is plain data; all zeroes is a valid (unspecified) value.
        let mut storage: libc::sockaddr_storage = unsafe { mem::zeroed() };
        let addr_len = addr.map_or(0, |a| write_sockaddr(&a, &mut storage));
        RawSpec {
            domain,
            kind: kind | libc::SOCK_CLOEXEC,
            protocol,
            addr: storage,
            addr_len,
            listen,
        }
    }
}

fn family(a: &SocketAddr) -> libc::c_int {
    match a {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    }
}

/// Writes `a` as a `sockaddr_in`/`sockaddr_in6` into `storage`; returns its length.
pub(super) fn write_sockaddr(a: &SocketAddr, storage: &mut libc::sockaddr_storage) -> libc::socklen_t {
    match a {
        SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(v4.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is large and aligned enough for any sockaddr.
            unsafe { std::ptr::write((storage as *mut libc::sockaddr_storage).cast(), sin) };
            mem::size_of::<libc::sockaddr_in>() as libc::socklen_t
        }
        SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: v6.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: v6.ip().octets(),
                },
                sin6_scope_id: v6.scope_id(),
            };
            // SAFETY: as above.
            unsafe { std::ptr::write((storage as *mut libc::sockaddr_storage).cast(), sin6) };
            mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t
        }
    }
}

/// Makes one socket as `spec` says. Async-signal-safe (syscalls on values made before).
fn make(spec: &RawSpec) -> Result<RawFd, i32> {
    // SAFETY: plain syscalls on our own values; the descriptor is closed on every error.
    unsafe {
        let fd = libc::socket(spec.domain, spec.kind, spec.protocol);
        if fd < 0 {
            return Err(errno());
        }
        let fail = |fd: RawFd| {
            let e = errno();
            libc::close(fd);
            Err(e)
        };
        if spec.listen {
            let one: libc::c_int = 1;
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&one as *const libc::c_int).cast(),
                mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        if spec.domain == libc::AF_INET6 {
            // An IPv6 socket serves IPv6 only: its IPv4 twin is a socket of its own.
            let one: libc::c_int = 1;
            libc::setsockopt(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_V6ONLY,
                (&one as *const libc::c_int).cast(),
                mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        if spec.addr_len > 0 && libc::bind(fd, (&spec.addr as *const libc::sockaddr_storage).cast(), spec.addr_len) != 0
        {
            return fail(fd);
        }
        if spec.listen && libc::listen(fd, 128) != 0 {
            return fail(fd);
        }
        Ok(fd)
    }
}

/// Makes every socket of `specs` on the calling thread (already inside), closing what was
/// made when one fails.
fn make_all(specs: &[RawSpec], out: &mut [RawFd; MAX_SOCKETS]) -> Result<(), i32> {
    for (i, spec) in specs.iter().enumerate() {
        match make(spec) {
            Ok(fd) => out[i] = fd,
            Err(e) => {
                for fd in &out[..i] {
                    // SAFETY: closes descriptors made just above.
                    unsafe { libc::close(*fd) };
                }
                return Err(e);
            }
        }
    }
    Ok(())
}

/// The harness's own user namespace owns `net`: a thread enters it and makes the sockets.
fn open_by_thread(net: RawFd, specs: &[RawSpec]) -> io::Result<Vec<OwnedFd>> {
    let specs = specs.to_vec();
    let made = std::thread::scope(|s| {
        s.spawn(move || -> Result<Vec<RawFd>, i32> {
            // The thread ends right after: nothing else ever runs in the namespace on it.
            enter(-1, net)?;
            let mut out = [-1; MAX_SOCKETS];
            make_all(&specs, &mut out)?;
            Ok(out[..specs.len()].to_vec())
        })
        .join()
    });
    match made {
        Ok(Ok(fds)) => Ok(fds
            .into_iter()
            // SAFETY: each descriptor was just made for us alone.
            .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
            .collect()),
        Ok(Err(errno)) => Err(entering_error(errno)),
        Err(_) => Err(io::Error::other("the thread entering the network namespace panicked")),
    }
}

/// Names what failed, and for EPERM what to do.
fn entering_error(errno: i32) -> io::Error {
    let e = io::Error::from_raw_os_error(errno);
    if errno == libc::EPERM {
        io::Error::new(
            e.kind(),
            format!(
                "cannot enter the attempt's network namespace ({e}): the harness needs CAP_SYS_ADMIN there; \
                 run medin as root, or without a user namespace of its own around it"
            ),
        )
    } else {
        io::Error::new(
            e.kind(),
            format!("cannot make a socket inside the attempt's network namespace: {e}"),
        )
    }
}

/// The holder's user namespace owns `net`: a forked child joins it, then `net`, makes the
/// sockets and sends them back with `SCM_RIGHTS` (or its errno as the message, with none).
fn open_by_child(user: Option<RawFd>, net: RawFd, specs: &[RawSpec]) -> io::Result<Vec<OwnedFd>> {
    let mut pair = [-1; 2];
    // SAFETY: socketpair fills two descriptors we then own.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just made; owned here from now on.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    // Everything the child touches is allocated before the fork: the harness is multi-threaded,
    // so the child must not allocate or take locks.
    let specs: [Option<RawSpec>; MAX_SOCKETS] = std::array::from_fn(|i| specs.get(i).copied());
    let count = specs.iter().flatten().count();
    let mut control = vec![0u8; cmsg_space(MAX_SOCKETS)];
    let user = user.unwrap_or(-1);
    let child_end = theirs.as_raw_fd();
    // SAFETY: fork; the child runs only async-signal-safe syscalls and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: in the single-threaded child; see child_main.
        unsafe { child_main(user, net, &specs, count, child_end, &mut control) }
    }
    drop(theirs);
    let received = receive_fds(ours.as_raw_fd(), count, &mut control);
    let mut status = 0;
    // SAFETY: reaps our own child.
    unsafe { while libc::waitpid(pid, &mut status, 0) < 0 && errno() == libc::EINTR {} }
    received
}

/// The forked child's whole life. Never returns.
unsafe fn child_main(
    user: RawFd,
    net: RawFd,
    specs: &[Option<RawSpec>; MAX_SOCKETS],
    count: usize,
    reply: RawFd,
    control: &mut [u8],
) -> ! {
    let mut made = [-1; MAX_SOCKETS];
    let mut result: i32 = 0;
    match enter(user, net) {
        Err(e) => result = e,
        Ok(()) => {
            for (i, spec) in specs.iter().take(count).enumerate() {
                let Some(spec) = spec else { break };
                match make(spec) {
                    Ok(fd) => made[i] = fd,
                    Err(e) => {
                        result = e;
                        break;
                    }
                }
            }
        }
    }
    let sent = if result == 0 { count } else { 0 };
    send_fds(reply, result, &made[..sent], control);
    libc::_exit(if result == 0 { 0 } else { 1 })
}

fn cmsg_space(fds: usize) -> usize {
    // SAFETY: CMSG_SPACE is arithmetic.
    unsafe { libc::CMSG_SPACE((fds * mem::size_of::<RawFd>()) as u32) as usize }
}

/// Sends `result` (0 or an errno) with `fds` attached. Async-signal-safe.
unsafe fn send_fds(sock: RawFd, result: i32, fds: &[RawFd], control: &mut [u8]) {
    let mut word = result;
    let mut iov = libc::iovec {
        iov_base: (&mut word as *mut i32).cast(),
        iov_len: mem::size_of::<i32>(),
    };
    let mut msg: libc::msghdr = mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        let bytes = mem::size_of_val(fds);
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(bytes as u32) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(bytes as u32) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast::<RawFd>(), fds.len());
    }
    libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL);
}

/// Receives the child's answer: `count` descriptors, or the errno it sent.
fn receive_fds(sock: RawFd, count: usize, control: &mut [u8]) -> io::Result<Vec<OwnedFd>> {
    let mut word: i32 = 0;
    let mut iov = libc::iovec {
        iov_base: (&mut word as *mut i32).cast(),
        iov_len: mem::size_of::<i32>(),
    };
    // SAFETY: msghdr is plain data; recvmsg writes only into the buffers it points to.
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control.len() as _;
    let n = loop {
        // SAFETY: as above.
        let n = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        break n;
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut fds = Vec::new();
    // SAFETY: walks the control messages recvmsg filled, within msg_controllen.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let bytes = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                for i in 0..bytes / mem::size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if n == 0 {
        return Err(io::Error::other(
            "the helper entering the attempt's network namespace ended without an answer",
        ));
    }
    if word != 0 {
        return Err(entering_error(word));
    }
    if fds.len() != count {
        return Err(io::Error::other(format!(
            "the helper entering the attempt's network namespace sent {} sockets, {count} were asked for",
            fds.len()
        )));
    }
    Ok(fds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::Ipv4Addr;

    /// A network namespace of its own, held by a sleeping `unshare -n` (root only), with
    /// loopback up.
    struct TestNet {
        child: std::process::Child,
        fd: OwnedFd,
    }

    impl TestNet {
        fn new() -> Option<TestNet> {
            // SAFETY: geteuid cannot fail.
            if unsafe { libc::geteuid() } != 0 {
                eprintln!("skipped: needs root to make a network namespace");
                return None;
            }
            let child = Command::new("unshare")
                .args(["-n", "sh", "-c", "ip link set lo up 2>/dev/null; exec sleep 60"])
                .spawn()
                .ok()?;
            let path = format!("/proc/{}/ns/net", child.id());
            let ours = std::fs::metadata("/proc/self/ns/net").ok()?;
            use std::os::unix::fs::MetadataExt;
            for _ in 0..200 {
                if let Ok(m) = std::fs::metadata(&path) {
                    if m.ino() != ours.ino() {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        let fd = OwnedFd::from(std::fs::File::open(&path).ok()?);
                        return Some(TestNet { child, fd });
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            None
        }
    }

    impl Drop for TestNet {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn echo_once(listener: TcpListener) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            if let Ok((mut s, _)) = listener.accept() {
                let mut b = [0u8; 5];
                if s.read_exact(&mut b).is_ok() {
                    let _ = s.write_all(&b);
                }
            }
        })
    }

    #[test]
    fn a_listener_made_inside_answers_inside_and_leaves_the_hosts_port_free() {
        let Some(net) = TestNet::new() else { return };
        for fork in [false, true] {
            let ns = Namespace::of(net.fd.as_fd()).unwrap();
            assert!(!ns.needs_user_namespace(), "as root the harness owns the namespace");
            let mut fds = ns
                .open_via(&[InsideSocket::TcpListener((Ipv4Addr::LOCALHOST, 0).into())], fork)
                .unwrap();
            let listener = TcpListener::from(fds.remove(0));
            let port = listener.local_addr().unwrap().port();
            // Another namespace: the host's 127.0.0.1 at that port is still free.
            let host_twin = TcpListener::bind((Ipv4Addr::LOCALHOST, port));
            assert!(host_twin.is_ok(), "the port is taken on the host too (fork: {fork})");
            let server = echo_once(listener);
            let script = format!(
                "import socket; s=socket.create_connection(('127.0.0.1',{port})); s.sendall(b'hello'); print(s.recv(5).decode())"
            );
            let out = ns
                .run(Path::new("/usr/bin/env"), &["python3", "-c", &script], b"")
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout).trim(),
                "hello",
                "inside, the listener answers (fork: {fork}): {out:?}"
            );
            server.join().unwrap();
        }
    }

    #[test]
    fn bind_inside_names_a_bad_address() {
        let Some(net) = TestNet::new() else { return };
        // 192.0.2.1 is no address of the namespace: binding it fails there.
        let err = bind_inside(net.fd.as_fd(), (Ipv4Addr::new(192, 0, 2, 1), 80).into()).unwrap_err();
        assert!(err.to_string().contains("cannot make a socket inside"), "{err}");
    }

    use std::os::fd::AsFd;
}
