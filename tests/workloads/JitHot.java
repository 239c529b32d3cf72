// JitHot.java - three hot Java methods for the JVM test (test_jit_langs.sh):
// a sieve, a matrix product and a string hash, compiled by HotSpot's JIT
// and named in the perf map the JVM writes at exit
// (-XX:+DumpPerfMapAtExit).  Argument: how long to run, in milliseconds.
public class JitHot {
    static int sieve(int n) {
        boolean[] composite = new boolean[n + 1];
        int primes = 0;
        for (int i = 2; i <= n; i++) {
            if (composite[i])
                continue;
            primes++;
            for (int j = i * 2; j <= n; j += i)
                composite[j] = true;
        }
        return primes;
    }

    static double multiply(int n) {
        double[] x = new double[n * n], y = new double[n * n], r = new double[n * n];
        java.util.Arrays.fill(x, 1.5);
        java.util.Arrays.fill(y, 2.5);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int k = 0; k < n; k++)
                    s += x[i * n + k] * y[k * n + j];
                r[i * n + j] = s;
            }
        return r[0];
    }

    static int hashStrings(int n) {
        int h = 0;
        for (int i = 0; i < n; i++)
            h = h * 31 + ("key" + i).hashCode();
        return h;
    }

    public static void main(String[] args) {
        long end = System.currentTimeMillis() + Long.parseLong(args.length > 0 ? args[0] : "2000");
        double x = 0;
        while (System.currentTimeMillis() < end) {
            x += sieve(200000);
            x += multiply(60);
            x += hashStrings(50000);
        }
        System.out.println(x > 0 ? "done" : "zero");
    }
}
