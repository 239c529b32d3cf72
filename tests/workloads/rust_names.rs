// rust_names.rs - Rust names for the demangling tests (test_demangle.sh):
// a module, a generic function in two instances, a trait method and a
// closure (rustc 1.63: no black_box, no attributes on closures); built with the legacy and the v0 mangling.
mod kv {
    pub struct Store { pub seed: u64 }
    impl Store {
        #[inline(never)]
        pub fn get(&self, k: &str) -> u64 {
            let mut h = self.seed;
            for r in 0..200u64 { for b in k.bytes() { h = h.wrapping_mul(31).wrapping_add(b as u64 + r); } }
            h
        }
    }
    pub trait Mix { fn mix(&self, n: u64) -> u64; }
    impl Mix for Store {
        #[inline(never)]
        fn mix(&self, n: u64) -> u64 {
            let mut h = self.seed ^ n;
            for r in 0..3000u64 { h = (h ^ (h >> 7)).wrapping_mul(6364136223846793005).wrapping_add(r); }
            h
        }
    }
    #[inline(never)]
    pub fn twice<T: Copy + std::ops::Mul<Output = T> + std::ops::Add<Output = T> + From<u8>>(v: T, n: u64) -> T {
        let mut s = v;
        for i in 0..n { s = s * v + T::from((i & 7) as u8); }
        s
    }
}
use kv::Mix;
fn opaque<T: Copy>(v: T) -> T { unsafe { std::ptr::read_volatile(&v) } }
fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3000);
    let spin = opaque(2000u64);
    let st = kv::Store { seed: 7 };
    let mut key = String::from("k".repeat(64));
    let mut acc = 0u64;
    let lam = |x: u64| { let mut s = x; for i in 0..3000u64 { s ^= s.wrapping_mul(7).wrapping_add(i); } s };
    for i in 0..n {
        key.replace_range(0..1, if i % 2 == 0 { "a" } else { "b" });
        acc = acc.wrapping_add(st.get(&key)).wrapping_add(st.mix(i));
        acc = acc.wrapping_add(kv::twice(opaque(3u64), spin));
        acc = acc.wrapping_add(kv::twice(opaque(1.0000001f64), spin) as u64);
        acc = acc.wrapping_add(lam(i));
    }
    println!("{}", acc);
}
