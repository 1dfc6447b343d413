from pkg.core import Engine

def clean(x):
    return x
