;; Answers every frame at once with the no-action reply.
(func (export "_start")
  (loop $turns
    (if (call $read_frame) (then (call $reply) (br $turns)))))
