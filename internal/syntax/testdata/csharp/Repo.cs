using System;
using System.Collections.Generic;
using static System.Math;

namespace App.Data
{
    public interface IRepo
    {
        void Save(string key);
    }

    public class Repo : IRepo
    {
        public const int Limit = 3;
        private readonly Dictionary<string, int> items = new();
        public int Count { get; private set; }

        public Repo() { }

        public void Save(string key) { items[key] = Max(Count, Limit); }

        private void Hidden() { }
    }

    public enum Mode { Fast, Slow }

    internal struct Pair { public int A; }

    public delegate void Handler(int x);
}
