# Tries to reach outside addresses, lists interfaces, and runs a TCP echo on
# loopback. Prints key=value lines; errors as errno names.
import errno
import socket
import sys
import threading


def ename(e):
    if isinstance(e, socket.timeout):
        return "TIMEOUT"
    return errno.errorcode.get(e.errno, str(e.errno))


def attempt(family, kind, address, label):
    try:
        s = socket.socket(family, kind)
    except OSError as e:
        print(f"{label}={ename(e)}")
        return
    s.settimeout(2)
    try:
        if kind == socket.SOCK_DGRAM:
            s.sendto(b"x", address)
        else:
            s.connect(address)
        print(f"{label}=OK")
    except OSError as e:
        print(f"{label}={ename(e)}")
    finally:
        s.close()


attempt(socket.AF_INET, socket.SOCK_STREAM, ("1.1.1.1", 53), "tcp_1.1.1.1")
attempt(socket.AF_INET, socket.SOCK_STREAM, ("8.8.8.8", 443), "tcp_8.8.8.8")
attempt(socket.AF_INET, socket.SOCK_DGRAM, ("1.1.1.1", 53), "udp_1.1.1.1")
attempt(socket.AF_INET6, socket.SOCK_STREAM, ("2606:4700:4700::1111", 53), "tcp6_outside")
try:
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    print("packet_socket=OK")
except OSError as e:
    print(f"packet_socket={ename(e)}")
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    print("raw_socket=OK")
except OSError as e:
    print(f"raw_socket={ename(e)}")

print("if_nameindex=" + ",".join(name for _, name in socket.if_nameindex()))
with open("/proc/net/dev") as f:
    names = [line.split(":")[0].strip() for line in f.readlines()[2:]]
print("proc_net_dev=" + ",".join(names))

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
port = server.getsockname()[1]


def serve():
    conn, _ = server.accept()
    conn.sendall(conn.recv(100).upper())
    conn.close()


thread = threading.Thread(target=serve)
thread.start()
client = socket.create_connection(("127.0.0.1", port), timeout=2)
client.sendall(b"ping")
print("loopback_echo=" + client.recv(100).decode())
client.close()
thread.join()

# argv[1]: an abstract unix socket a host process listens on.
abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    abstract.connect("\0" + sys.argv[1])
    print("abstract_unix=OK")
except OSError as e:
    print(f"abstract_unix={ename(e)}")
