;; Per frame: spins N rounds of exactly 8 fuel, then answers. N is the
;; frame's leading decimal digits, or $default when it has none (a game's
;; observation); tests make variants by rewriting $default's value.
(global $default i32 (i32.const 0))

;; The value of the digits at 4096.. (0 when there are none).
(func $leading_number (result i32)
  (local $i i32) (local $c i32) (local $v i32)
  (block $end
    (loop $digits
      (local.set $c (i32.load8_u (i32.add (i32.const 4096) (local.get $i))))
      (br_if $end (i32.gt_u (i32.sub (local.get $c) (i32.const 48)) (i32.const 9)))
      (local.set $v
        (i32.add (i32.mul (local.get $v) (i32.const 10)) (i32.sub (local.get $c) (i32.const 48))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $digits)))
  (local.get $v))

(func (export "_start")
  (local $n i32)
  (loop $turns
    (if (call $read_frame)
      (then
        (local.set $n (call $leading_number))
        (if (i32.eqz (local.get $n)) (then (local.set $n (global.get $default))))
        (call $spin (local.get $n))
        (call $reply)
        (br $turns)))))
