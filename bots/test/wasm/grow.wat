;; Grows its memory by 64 MiB at a time without bound; when a grow is
;; refused it traps, so the verdict shows where the limit stopped it.
(func (export "_start")
  (drop (call $read_frame))
  (loop $grow
    (br_if $grow (i32.ne (memory.grow (i32.const 1024)) (i32.const -1))))
  (unreachable))
