;; Answers the first frame, then reaches `unreachable` on the second.
(func (export "_start")
  (if (call $read_frame) (then (call $reply)))
  (drop (call $read_frame))
  (unreachable))
