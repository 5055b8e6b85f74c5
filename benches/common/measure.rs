//! What the benches measure the process with: live heap bytes (a counting global allocator —
//! resident size also counts pages the allocator keeps after a free), resident memory and CPU
//! time. Including this module installs the allocator.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Counts live heap bytes.
pub struct Counting;

static HEAP: AtomicUsize = AtomicUsize::new(0);
/// The most `HEAP` has been since the last [`reset_peak`].
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = HEAP.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HEAP.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap in use, in MB.
pub fn heap_mb() -> f64 {
    HEAP.load(Ordering::Relaxed) as f64 / 1e6
}

/// The most heap in use since the last [`reset_peak`] (or the start), in MB.
pub fn peak_mb() -> f64 {
    PEAK.load(Ordering::Relaxed) as f64 / 1e6
}

/// Starts the peak over from the heap in use now.
pub fn reset_peak() {
    PEAK.store(HEAP.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Resident memory of this process, in MB (from /proc/self/statm).
pub fn rss_mb() -> f64 {
    let text = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = text
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / 1e6
}

/// What resident memory is made of (/proc/self/status): `anonymous 140.2 MB, files 18.2 MB` —
/// files are the binary's code and the libraries' mapped pages, the rest the heap and stacks.
pub fn resident_parts() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mb = |field: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb * 1024.0 / 1e6)
    };
    format!(
        "anonymous {:.1} MB, files {:.1} MB",
        mb("RssAnon:"),
        mb("RssFile:")
    )
}

/// CPU time (user + system) this process has used.
pub fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// What glibc's allocator holds (`mallinfo2`): bytes in use, bytes free but kept in its arenas
/// (fragmentation: the gap between heap and resident), bytes in mmapped chunks, in MB.
pub fn malloc_report() -> String {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let m = unsafe { libc::mallinfo2() };
        format!(
            "malloc: arenas {:.1} MB (in use {:.1}, free kept {:.1}, top {:.1}), mmapped {:.1} MB",
            m.arena as f64 / 1e6,
            m.uordblks as f64 / 1e6,
            m.fordblks as f64 / 1e6,
            m.keepcost as f64 / 1e6,
            m.hblkhd as f64 / 1e6
        )
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    String::new()
}

/// Hands the allocator's free pages back to the system (what kdrift's loop does after a list).
pub fn release_freed_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free heap pages; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}
