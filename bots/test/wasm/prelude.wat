;; Shared by every test module: each NAME.wat is the body of a module, and
;; the module is `(module` + this prelude + the body + `)` (see README.md).
;;
;; Memory layout: 0..8 an iovec for reading, 8..16 one for writing,
;; 16 the count a call returns, 256.. the reply text, 4096.. the input.
(import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
(memory (export "memory") 2)
(data (i32.const 256) "{\"orders\": [], \"spawn\": false}\n")

;; Reads until a newline has been read (a whole frame); 0 at end of input.
(func $read_frame (result i32)
  (local $n i32) (local $i i32)
  (loop $more
    (i32.store (i32.const 0) (i32.const 4096))
    (i32.store (i32.const 4) (i32.const 61440))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
    (local.set $n (i32.load (i32.const 16)))
    (if (i32.eqz (local.get $n)) (then (return (i32.const 0))))
    (local.set $i (i32.const 0))
    (block $found
      (loop $scan
        (br_if $found
          (i32.eq (i32.load8_u (i32.add (i32.const 4096) (local.get $i))) (i32.const 10)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $scan (i32.lt_u (local.get $i) (local.get $n))))
      (br $more)))
  (i32.const 1))

;; Writes `len` bytes at `at` to stdout.
(func $write (param $at i32) (param $len i32)
  (i32.store (i32.const 8) (local.get $at))
  (i32.store (i32.const 12) (local.get $len))
  (drop (call $fd_write (i32.const 1) (i32.const 8) (i32.const 1) (i32.const 16))))

;; Writes the no-action reply.
(func $reply (call $write (i32.const 256) (i32.const 31)))

;; Runs a loop of `n` rounds at exactly 8 fuel a round (plus 3 to leave).
(func $spin (param $n i32)
  (block $done
    (loop $round
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $round))))
