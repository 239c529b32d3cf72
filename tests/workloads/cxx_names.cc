// cxx_names.cc - C++ names for the demangling tests (test_demangle.sh):
// a namespace, overloads, class and function templates, a lambda and an
// operator, each hot enough to be a hotspot of >= 1%, none inlined.
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kv {
struct Store {
	long get(const std::string &k);
	long get(long k);
};
__attribute__((noinline)) long Store::get(const std::string &k)
{
	long h = 0;
	for (int r = 0; r < 200; r++)
		for (char c : k)
			h = h * 31 + c + r;
	return h;
}
__attribute__((noinline)) long Store::get(long k)
{
	long h = k;
	for (int r = 0; r < 3000; r++)
		h = (h ^ (h >> 7)) * 6364136223846793005L + r;
	return h;
}
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T twice(long n) const
	{
		T s = v;
		for (long i = 0; i < n; i++)
			s = s * v + (T)(i & 7);
		return s;
	}
};
template <typename T> __attribute__((noinline)) T mix(T a, long n)
{
	for (long i = 0; i < n; i++)
		a = a / (T)3 + (T)(i & 15);
	return a;
}
struct Vec {
	double x;
	__attribute__((noinline)) Vec operator+(const Vec &o) const
	{
		double s = x;
		for (int i = 0; i < 3000; i++)
			s = s * 1.0000001 + o.x;
		return Vec{s};
	}
};
}  // namespace kv

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000;
	volatile long spin = 2000;
	kv::Store st;
	std::string key(64, 'k');
	long acc = 0;
	kv::Box<int> bi{3};
	kv::Box<double> bd{1.0000001};
	kv::Vec a{1}, b{2};
	auto lam = [&](long x) __attribute__((noinline)) {
		long s = x;
		for (int i = 0; i < 3000; i++)
			s ^= s * 7 + i;
		return s;
	};
	for (long i = 0; i < n; i++) {
		key[i % 64] = (char)('a' + i % 26);
		acc += st.get(key);
		acc += st.get(i);
		acc += bi.twice(spin);
		acc += (long)bd.twice(spin);
		acc += kv::mix<long>(i, spin) + (long)kv::mix<double>((double)i, spin);
		a = a + b;
		acc += lam(i);
	}
	printf("%ld %f\n", acc, a.x);
	return 0;
}
