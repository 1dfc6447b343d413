#include "shape.hpp"
#include <vector>

namespace geo {
namespace detail {
int helper(int x) { return x * 2; }
}

class Shape {
public:
    Shape(int sides);
    virtual double area() const = 0;
    int sides() const { return sides_; }
private:
    int sides_;
    void reset();
};

struct Point {
    double x, y;
};

template <typename T>
T twice(T v) { return v + v; }

using Points = std::vector<Point>;

enum class Kind { Square, Circle };
}

double geo::Shape::area() const { return detail::helper(sides_); }

static int local_only() { return 1; }
