;; Never answers: sleeps in a loop, asking the host to wait 1 s each time
;; (poll_oneoff on a clock). No host call waits, so this only burns fuel.
(import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
;; A subscription at 1024: userdata 0, tag 0 (clock), monotonic clock, 1 s timeout.
(data (i32.const 1032) "\00")
(data (i32.const 1040) "\01\00\00\00")
(data (i32.const 1048) "\00\ca\9a\3b\00\00\00\00")
(func (export "_start")
  (drop (call $read_frame))
  (loop $forever
    (drop (call $poll_oneoff (i32.const 1024) (i32.const 2048) (i32.const 1) (i32.const 16)))
    (br $forever)))
