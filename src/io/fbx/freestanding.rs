//! What ufbx's C file asks for when the web page builds it without a C library
//! (`UFBX_NO_LIBC`, `.cargo/config.toml`): its maths (from `libm`, Rust's port of musl's), its
//! string functions and its allocator (Rust's, told each block's size by ufbx itself, as its
//! `ufbx_free(ptr, old_size)` interface gives it). Only in the web build; the desktop links
//! ufbx against the platform's C library.
//!
//! Every function here is called by ufbx alone, with the pointers and sizes its own
//! documentation promises (valid for the given counts, NUL-terminated strings).
#![allow(unsafe_code)] // the C interface: raw pointers from ufbx

use std::alloc::Layout;
use std::ffi::{c_char, c_int, c_void};

/// ufbx's blocks are aligned to 16 bytes at most (`UFBX_MAXIMUM_ALIGNMENT`'s default is 8).
const ALIGN: usize = 16;

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.max(1), ALIGN).ok()
}

macro_rules! math1 {
    ($($name:ident => $f:path),* $(,)?) => {$(
        #[unsafe(no_mangle)]
        extern "C" fn $name(x: f64) -> f64 {
            $f(x)
        }
    )*};
}
macro_rules! math2 {
    ($($name:ident => $f:path),* $(,)?) => {$(
        #[unsafe(no_mangle)]
        extern "C" fn $name(x: f64, y: f64) -> f64 {
            $f(x, y)
        }
    )*};
}

math1! {
    ufbx_sqrt => libm::sqrt, ufbx_sin => libm::sin, ufbx_cos => libm::cos,
    ufbx_tan => libm::tan, ufbx_asin => libm::asin, ufbx_acos => libm::acos,
    ufbx_atan => libm::atan, ufbx_fabs => libm::fabs, ufbx_rint => libm::rint,
    ufbx_floor => libm::floor, ufbx_ceil => libm::ceil,
}
math2! {
    ufbx_atan2 => libm::atan2, ufbx_pow => libm::pow, ufbx_fmin => libm::fmin,
    ufbx_fmax => libm::fmax, ufbx_copysign => libm::copysign, ufbx_nextafter => libm::nextafter,
}

#[unsafe(no_mangle)]
extern "C" fn ufbx_isnan(x: f64) -> c_int {
    c_int::from(x.is_nan())
}

#[unsafe(no_mangle)]
extern "C" fn ufbx_malloc(size: usize) -> *mut c_void {
    let Some(l) = layout(size) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the layout's size is at least 1.
    unsafe { std::alloc::alloc(l) }.cast()
}

#[unsafe(no_mangle)]
extern "C" fn ufbx_realloc(ptr: *mut c_void, old_size: usize, new_size: usize) -> *mut c_void {
    if ptr.is_null() {
        return ufbx_malloc(new_size);
    }
    match layout(old_size) {
        // SAFETY: `ptr` came from `ufbx_malloc`/`ufbx_realloc` with `old_size` (ufbx passes
        // each block's size back), so it was allocated with this layout.
        Some(l) => unsafe { std::alloc::realloc(ptr.cast(), l, new_size.max(1)) }.cast(),
        None => std::ptr::null_mut(),
    }
}

#[unsafe(no_mangle)]
extern "C" fn ufbx_free(ptr: *mut c_void, old_size: usize) {
    if let (false, Some(l)) = (ptr.is_null(), layout(old_size)) {
        // SAFETY: as in `ufbx_realloc`: allocated here with this layout.
        unsafe { std::alloc::dealloc(ptr.cast(), l) }
    }
}

/// # Safety
/// `dst` and `src` valid for `n` bytes, not overlapping.
#[unsafe(no_mangle)]
unsafe extern "C" fn ufbx_memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's promise above.
    unsafe { std::ptr::copy_nonoverlapping(src.cast::<u8>(), dst.cast::<u8>(), n) };
    dst
}

/// # Safety
/// `dst` and `src` valid for `n` bytes (they may overlap).
#[unsafe(no_mangle)]
unsafe extern "C" fn ufbx_memmove(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // SAFETY: the caller's promise above.
    unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), n) };
    dst
}

/// # Safety
/// `dst` valid for `n` bytes.
#[unsafe(no_mangle)]
unsafe extern "C" fn ufbx_memset(dst: *mut c_void, ch: c_int, n: usize) -> *mut c_void {
    // SAFETY: the caller's promise above; C's memset stores `ch` as an unsigned char.
    unsafe { std::ptr::write_bytes(dst.cast::<u8>(), ch as u8, n) };
    dst
}

/// # Safety
/// `ptr` valid for `n` bytes.
#[unsafe(no_mangle)]
unsafe extern "C" fn ufbx_memchr(ptr: *const c_void, value: c_int, n: usize) -> *const c_void {
    // SAFETY: the caller's promise above.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), n) };
    bytes
        .iter()
        .position(|&b| b == value as u8)
        .map_or(std::ptr::null(), |i| bytes[i..].as_ptr().cast())
}

/// # Safety
/// `a` and `b` valid for `n` bytes.
#[unsafe(no_mangle)]
unsafe extern "C" fn ufbx_memcmp(a: *const c_void, b: *const c_void, n: usize) -> c_int {
    // SAFETY: the caller's promise above.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts(a.cast::<u8>(), n),
            std::slice::from_raw_parts(b.cast::<u8>(), n),
        )
    };
    compare(a, b)
}

/// C's comparison result of two byte strings: the sign of the first difference.
fn compare(a: &[u8], b: &[u8]) -> c_int {
    a.iter()
        .zip(b)
        .find(|(x, y)| x != y)
        .map_or(0, |(x, y)| c_int::from(*x) - c_int::from(*y))
}

/// # Safety
/// `s` a NUL-terminated string.
#[unsafe(no_mangle)]
unsafe extern "C" fn ufbx_strlen(s: *const c_char) -> usize {
    // SAFETY: the caller's promise above.
    unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes().len()
}

/// # Safety
/// `a` and `b` NUL-terminated strings.
#[unsafe(no_mangle)]
unsafe extern "C" fn ufbx_strcmp(a: *const c_char, b: *const c_char) -> c_int {
    // SAFETY: the caller's promise above.
    let (a, b) = unsafe { (std::ffi::CStr::from_ptr(a), std::ffi::CStr::from_ptr(b)) };
    compare(a.to_bytes_with_nul(), b.to_bytes_with_nul())
}

/// # Safety
/// `a` and `b` NUL-terminated strings, or valid for `n` bytes.
#[unsafe(no_mangle)]
unsafe extern "C" fn ufbx_strncmp(a: *const c_char, b: *const c_char, n: usize) -> c_int {
    for i in 0..n {
        // SAFETY: the caller's promise above: each byte up to the first NUL (or `n`) is
        // readable, and the loop stops at a NUL.
        let (x, y) = unsafe { (*a.add(i) as u8, *b.add(i) as u8) };
        if x != y || x == 0 {
            return c_int::from(x) - c_int::from(y);
        }
    }
    0
}
