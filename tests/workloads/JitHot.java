// JitHot.java - three hot Java methods for the JVM test (test_jit_langs.sh):
// a sieve, a matrix product and a string hash, compiled by HotSpot's JIT
// and named in the perf map the JVM writes at exit
// (-XX:+DumpPerfMapAtExit) or on request (jcmd PID Compiler.perfmap).
// Arguments: how long to run, in milliseconds; optionally a file to write
// the JVM's pid to once it has run half that time (its hot methods
// compiled by then), for jcmd.
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

    public static void main(String[] args) throws java.io.IOException {
        long ms = Long.parseLong(args.length > 0 ? args[0] : "2000");
        long start = System.currentTimeMillis(), end = start + ms;
        boolean told = args.length < 2;
        double x = 0;
        while (System.currentTimeMillis() < end) {
            if (!told && System.currentTimeMillis() >= start + ms / 2) {
                java.nio.file.Path tmp = java.nio.file.Paths.get(args[1] + ".tmp");
                java.nio.file.Files.writeString(tmp, ProcessHandle.current().pid() + "\n");
                java.nio.file.Files.move(tmp, java.nio.file.Paths.get(args[1]));
                told = true;
            }
            x += sieve(200000);
            x += multiply(60);
            x += hashStrings(50000);
        }
        System.out.println(x > 0 ? "done" : "zero");
    }
}
