#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_harness::pager_replies(data));
