// jit_hot.js - three hot JavaScript functions for the Node tests
// (test_jit_langs.sh): a sieve, a class method (Matrix.multiply) and a
// string hash, each optimized by V8's JIT and named in Node's perf map
// (--perf-basic-prof) or its jitdump (--perf-prof).  Argument: how long
// to run, in milliseconds.
'use strict';

function sieve(n) {
  const composite = new Uint8Array(n + 1);
  let primes = 0;
  for (let i = 2; i <= n; i++) {
    if (composite[i]) continue;
    primes++;
    for (let j = i * 2; j <= n; j += i) composite[j] = 1;
  }
  return primes;
}

class Matrix {
  constructor(n) { this.n = n; this.v = new Float64Array(n * n).fill(1.5); }
  multiply(o) {
    const n = this.n, r = new Matrix(n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let k = 0; k < n; k++) s += this.v[i * n + k] * o.v[k * n + j];
        r.v[i * n + j] = s;
      }
    }
    return r;
  }
}

function hashStrings(n) {
  let h = 0;
  for (let i = 0; i < n; i++) {
    const s = 'key' + i;
    for (let k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) | 0;
  }
  return h;
}

const end = Date.now() + Number(process.argv[2] || 2000);
let x = 0;
while (Date.now() < end) {
  x += sieve(200000);
  x += new Matrix(60).multiply(new Matrix(60)).v[0];
  x += hashStrings(50000);
}
console.log(x > 0 ? 'done' : 'zero');
