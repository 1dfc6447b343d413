package com.example.app;

import java.util.List;
import java.util.*;
import static java.lang.Math.max;

public class Service implements Runnable {
    public static final int LIMIT = 5;
    private List<String> names;

    public Service(List<String> names) { this.names = names; }

    @Override
    public void run() { helper(names.size()); }

    private int helper(int n) { return max(n, LIMIT); }

    public interface Listener {
        void onEvent(String e);
    }

    enum State { IDLE, BUSY; void reset() {} }

    public record Point(int x, int y) {}
}

class Internal {}
