//! A hint to the processor to start loading memory that will be read soon:
//! the training environment steps hundreds of boards in turn, each far
//! from the last in memory, and asking for the next board's scattered
//! pieces while this one is stepped hides most of the wait for them.

/// Asks for the cache line holding the first byte of `data`, and the line
/// after it when `data` reaches that far. Does nothing on processors
/// without the hint.
#[inline(always)]
pub fn lines<T>(data: &[T], lines: usize) {
    let bytes = std::mem::size_of_val(data);
    let start = data.as_ptr().cast::<u8>();
    for line in 0..lines.min(bytes.div_ceil(64)) {
        // SAFETY: a prefetch never faults and changes nothing observable;
        // the address is inside `data`.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(start.add(line * 64).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (start, line);
    }
}
