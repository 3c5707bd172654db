"""Per-language parsing: symbols, references and chunks of a small realistic file in each language.

Each case is a fixture source with a function, a type, a method, documentation, a call, an import
and inheritance (where the language has them), and the exact symbols and references expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from maguyva.index.chunk import MAX_CHUNK_CHARS, MAX_CHUNK_LINES, significant_chars
from maguyva.index.model import SYMBOL_KINDS, ParsedFile
from maguyva.index.parse import parse_file


@dataclass
class Case:
    path: str
    source: str
    #: (qualified_name, kind, start_line, end_line), in order: the file's complete symbol list.
    symbols: list[tuple[str, str, int, int]]
    #: (kind, name, line, enclosing, qualifier, imported_names): the complete reference set.
    references: set[tuple[str, str, int, str | None, str, tuple[str, ...]]]
    #: qualified_name -> expected signature
    signatures: dict[str, str] = field(default_factory=dict)
    #: qualified_name -> expected docstring ("" for none)
    docstrings: dict[str, str] = field(default_factory=dict)
    #: qualified_name -> expected parent
    parents: dict[str, str | None] = field(default_factory=dict)


CASES: dict[str, Case] = {
    "bash": Case(
        path="scripts/greet.sh",
        source=r"""#!/bin/bash
source ./lib.sh
. "$HOME/env.sh"

# Print a greeting.
# Second line.
greet() {
  local name="$1"
  echo "hello $name"
  helper "$name"
}

function helper {
  printf '%s\n' "$1" | tr a-z A-Z
}

greet world
""",
        symbols=[
            ("greet", "function", 7, 11),
            ("helper", "function", 13, 15),
        ],
        references={
            ("import", "./lib.sh", 2, None, "", ()),
            ("import", "$HOME/env.sh", 3, None, "", ()),
            ("call", "echo", 9, "greet", "", ()),
            ("call", "helper", 10, "greet", "", ()),
            ("call", "printf", 14, "helper", "", ()),
            ("call", "tr", 14, "helper", "", ()),
            ("call", "greet", 17, None, "", ()),
        },
        signatures={"greet": "greet()", "helper": "function helper"},
        docstrings={"greet": "Print a greeting.\nSecond line.", "helper": ""},
    ),
    "c": Case(
        path="src/geometry.c",
        source=r"""#include <stdio.h>
#include "util.h"

#define MAX 10

/* A point
 * in space. */
struct point {
    int x;
};

typedef struct { int y; } pair_t;

enum color { RED, GREEN };

// Add two numbers.
static int add(int a, int b) {
    printf("%d\n", a);
    return helper(a) + b;
}

int *make(void);
""",
        symbols=[
            ("MAX", "constant", 4, 4),
            ("point", "struct", 8, 10),
            ("pair_t", "type", 12, 12),
            ("color", "enum", 14, 14),
            ("add", "function", 17, 20),
        ],
        references={
            ("import", "stdio.h", 1, None, "", ()),
            ("import", "util.h", 2, None, "", ()),
            ("call", "printf", 18, "add", "", ()),
            ("call", "helper", 19, "add", "", ()),
        },
        signatures={"add": "static int add(int a, int b)", "point": "struct point"},
        docstrings={"point": "A point\nin space.", "add": "Add two numbers.", "color": ""},
    ),
    "cpp": Case(
        path="src/shape.cpp",
        source=r"""#include <vector>
#include "shape.hpp"

namespace geo {

/// A shape base.
class Shape {
public:
    virtual double area() const = 0;
    int id() const { return id_; }
private:
    int id_;
};

// A circle.
class Circle : public Shape, private Named {
public:
    double area() const override;
};

struct Pt { int x; };

template <typename T>
T twice(T v) { return v * 2; }

}  // namespace geo

// Area of a circle.
double geo::Circle::area() const {
    std::vector<int> v;
    v.push_back(1);
    return compute(3.14);
}

int main() {
    auto* c = new geo::Circle();
    return 0;
}
""",
        symbols=[
            ("geo", "module", 4, 26),
            ("geo.Shape", "class", 7, 13),
            ("geo.Shape.area", "method", 9, 9),
            ("geo.Shape.id", "method", 10, 10),
            ("geo.Circle", "class", 16, 19),
            ("geo.Circle.area", "method", 18, 18),
            ("geo.Pt", "struct", 21, 21),
            ("geo.twice", "function", 24, 24),
            ("geo.Circle.area", "method", 29, 33),
            ("main", "function", 35, 38),
        ],
        references={
            ("import", "vector", 1, None, "", ()),
            ("import", "shape.hpp", 2, None, "", ()),
            ("inherit", "Shape", 16, "geo.Circle", "", ()),
            ("inherit", "Named", 16, "geo.Circle", "", ()),
            ("call", "push_back", 31, "geo.Circle.area", "v", ()),
            ("call", "compute", 32, "geo.Circle.area", "", ()),
            ("call", "Circle", 36, "main", "geo", ()),
        },
        signatures={
            "geo.Circle": "class Circle : public Shape, private Named",
            "geo.Shape.id": "int id() const",
            "main": "int main()",
        },
        docstrings={"geo.Shape": "A shape base.", "geo.Circle": "A circle.", "main": ""},
        parents={"geo.Shape.id": "geo.Shape", "geo": None},
    ),
    "csharp": Case(
        path="Shop/Cart.cs",
        source=r"""using System;
using System.Collections.Generic;

namespace Shop.Core
{
    /// <summary>
    /// A cart.
    /// </summary>
    public class Cart : BaseCart, IDisposable
    {
        private int count;

        // Add an item.
        public void Add(Item item)
        {
            Console.WriteLine(item.Name);
            Helper.Log("add");
        }

        public int Count => count;
    }

    public interface IShop { void Open(); }

    public struct Money { public decimal Amount; }

    public enum Kind { A, B }
}
""",
        symbols=[
            ("Shop.Core", "module", 4, 28),
            ("Shop.Core.Cart", "class", 9, 21),
            ("Shop.Core.Cart.Add", "method", 14, 18),
            ("Shop.Core.IShop", "interface", 23, 23),
            ("Shop.Core.IShop.Open", "method", 23, 23),
            ("Shop.Core.Money", "struct", 25, 25),
            ("Shop.Core.Kind", "enum", 27, 27),
        ],
        references={
            ("import", "System", 1, None, "", ()),
            ("import", "System.Collections.Generic", 2, None, "", ()),
            ("inherit", "BaseCart", 9, "Shop.Core.Cart", "", ()),
            ("inherit", "IDisposable", 9, "Shop.Core.Cart", "", ()),
            ("call", "WriteLine", 16, "Shop.Core.Cart.Add", "Console", ()),
            ("call", "Log", 17, "Shop.Core.Cart.Add", "Helper", ()),
        },
        signatures={
            "Shop.Core.Cart": "public class Cart : BaseCart, IDisposable",
            "Shop.Core.Cart.Add": "public void Add(Item item)",
        },
        docstrings={"Shop.Core.Cart": "A cart.", "Shop.Core.Cart.Add": "Add an item."},
        parents={"Shop.Core.Cart.Add": "Shop.Core.Cart", "Shop.Core": "Shop"},
    ),
    "elixir": Case(
        path="lib/shop/cart.ex",
        source=r'''defmodule Shop.Cart do
  @moduledoc """
  A shopping cart.
  """
  use GenServer
  import Enum, only: [map: 2]
  alias Shop.{Item, Price}
  require Logger
  @behaviour Access

  @limit 10

  @doc "Adds an item."
  def add(cart, item) do
    Logger.info("add")
    total(cart) + Item.price(item)
  end

  # Private helper.
  defp total(cart), do: Enum.sum(cart)

  defmacro dbg(x), do: x

  defprotocol Size do
    def size(data)
  end

  defimpl Size, for: Map do
    def size(map), do: map_size(map)
  end
end
''',
        symbols=[
            ("Shop.Cart", "module", 1, 31),
            ("Shop.Cart.add", "function", 14, 17),
            ("Shop.Cart.total", "function", 20, 20),
            ("Shop.Cart.dbg", "macro", 22, 22),
            ("Shop.Cart.Size", "interface", 24, 26),
            ("Shop.Cart.Size.size", "method", 25, 25),
            ("Shop.Cart.size", "function", 29, 29),
        ],
        references={
            ("import", "GenServer", 5, "Shop.Cart", "", ()),
            ("import", "Enum", 6, "Shop.Cart", "", ()),
            ("import", "Shop", 7, "Shop.Cart", "", ("Item", "Price")),
            ("import", "Logger", 8, "Shop.Cart", "", ()),
            ("inherit", "Access", 9, "Shop.Cart", "", ()),
            ("call", "info", 15, "Shop.Cart.add", "Logger", ()),
            ("call", "total", 16, "Shop.Cart.add", "", ()),
            ("call", "price", 16, "Shop.Cart.add", "Item", ()),
            ("call", "sum", 20, "Shop.Cart.total", "Enum", ()),
            ("inherit", "Size", 28, "Shop.Cart", "", ()),
            ("call", "map_size", 29, "Shop.Cart.size", "", ()),
        },
        signatures={
            "Shop.Cart": "defmodule Shop.Cart",
            "Shop.Cart.add": "def add(cart, item)",
            "Shop.Cart.total": "defp total(cart), do: Enum.sum(cart)",
        },
        docstrings={
            "Shop.Cart": "A shopping cart.",
            "Shop.Cart.add": "Adds an item.",
            "Shop.Cart.total": "Private helper.",
            "Shop.Cart.dbg": "",
        },
        parents={"Shop.Cart": "Shop", "Shop.Cart.add": "Shop.Cart"},
    ),
    "go": Case(
        path="server/server.go",
        source=r"""package main

import (
	"fmt"
	str "strings"
)

// Server serves.
// Second line.
type Server struct {
	Base
	name string
}

type Handler interface {
	io.Closer
	Serve() error
}

// Start starts it.
func (s *Server) Start(port int) error {
	fmt.Println(str.ToUpper(s.name))
	return helper(port)
}

func helper(p int) error {
	return nil
}

const MaxConn = 10
""",
        symbols=[
            ("Server", "struct", 10, 13),
            ("Handler", "interface", 15, 18),
            ("Handler.Serve", "method", 17, 17),
            ("Server.Start", "method", 21, 24),
            ("helper", "function", 26, 28),
            ("MaxConn", "constant", 30, 30),
        ],
        references={
            ("import", "fmt", 4, None, "", ()),
            ("import", "strings", 5, None, "", ()),
            ("inherit", "Base", 11, "Server", "", ()),
            ("inherit", "Closer", 16, "Handler", "", ()),
            ("call", "Println", 22, "Server.Start", "fmt", ()),
            ("call", "ToUpper", 22, "Server.Start", "str", ()),
            ("call", "helper", 23, "Server.Start", "", ()),
        },
        signatures={
            "Server": "type Server struct",
            "Server.Start": "func (s *Server) Start(port int) error",
            "MaxConn": "const MaxConn = 10",
        },
        docstrings={"Server": "Server serves.\nSecond line.", "Server.Start": "Start starts it."},
        parents={"Server.Start": "Server", "helper": None},
    ),
    "haskell": Case(
        path="src/Data/Shape.hs",
        source=r"""module Data.Shape (Shape(..), area) where

import qualified Data.Map as M
import Data.List (sortBy, nub)

-- | A shape.
data Shape = Circle Double | Square Double
  deriving (Show, Eq)

-- | Things with an area.
class HasArea a where
  areaOf :: a -> Double

instance HasArea Shape where
  areaOf = area

type Name = String

newtype Wrapper = Wrapper Int

-- | Compute the area.
area :: Shape -> Double
area (Circle r) = pi * r * r
area (Square s) = helper s

helper :: Double -> Double
helper s = M.findWithDefault 0 s (M.fromList [])
""",
        symbols=[
            ("Shape", "type", 7, 8),
            ("HasArea", "interface", 11, 12),
            ("HasArea.areaOf", "method", 12, 12),
            ("Shape.areaOf", "method", 15, 15),
            ("Name", "type", 17, 17),
            ("Wrapper", "type", 19, 19),
            ("area", "function", 22, 24),
            ("helper", "function", 26, 27),
        ],
        references={
            ("import", "Data.Map", 3, None, "", ()),
            ("import", "Data.List", 4, None, "", ("sortBy", "nub")),
            ("inherit", "HasArea", 14, "Shape", "", ()),
            ("call", "helper", 24, "area", "", ()),
            ("call", "findWithDefault", 27, "helper", "M", ()),
            ("call", "fromList", 27, "helper", "M", ()),
        },
        signatures={
            "area": "area :: Shape -> Double",
            "HasArea": "class HasArea a where",
            "Shape": "data Shape = Circle Double | Square Double",
        },
        docstrings={
            "Shape": "A shape.",
            "HasArea": "Things with an area.",
            "area": "Compute the area.",
        },
    ),
    "java": Case(
        path="src/main/java/com/example/shop/Cart.java",
        source=r"""package com.example.shop;

import java.util.List;
import static java.lang.Math.max;

/**
 * A cart of items.
 */
public class Cart extends BaseCart implements Serializable, Comparable<Cart> {
    private static final int LIMIT = 10;

    /** Adds an item. */
    @Override
    public void add(Item item) {
        items.add(item);
        System.out.println(max(1, 2));
    }

    interface Listener { void onAdd(Item item); }

    enum State { OPEN, CLOSED }

    public Cart() { super(); }
}

record Point(int x, int y) {}
""",
        symbols=[
            ("Cart", "class", 9, 24),
            ("Cart.LIMIT", "constant", 10, 10),
            ("Cart.add", "method", 13, 17),
            ("Cart.Listener", "interface", 19, 19),
            ("Cart.Listener.onAdd", "method", 19, 19),
            ("Cart.State", "enum", 21, 21),
            ("Cart.Cart", "method", 23, 23),
            ("Point", "class", 26, 26),
        ],
        references={
            ("import", "java.util.List", 3, None, "", ()),
            ("import", "java.lang.Math.max", 4, None, "", ()),
            ("inherit", "BaseCart", 9, "Cart", "", ()),
            ("inherit", "Serializable", 9, "Cart", "", ()),
            ("inherit", "Comparable", 9, "Cart", "", ()),
            ("call", "add", 15, "Cart.add", "items", ()),
            ("call", "println", 16, "Cart.add", "System.out", ()),
            ("call", "max", 16, "Cart.add", "", ()),
        },
        signatures={
            "Cart.add": "public void add(Item item)",
            "Cart.LIMIT": "private static final int LIMIT = 10;",
        },
        docstrings={"Cart": "A cart of items.", "Cart.add": "Adds an item.", "Cart.Cart": ""},
        parents={"Cart.Listener.onAdd": "Cart.Listener"},
    ),
    "javascript": Case(
        path="src/animal.js",
        source=r"""import { readFile, writeFile } from "fs";
import path from "path";
const util = require("./util");

/**
 * A base class.
 */
class Animal extends Base {
  // Speak.
  speak(loud) {
    console.log(this.name);
    return helper(loud);
  }
}

// Helper function.
function helper(x) {
  return x * 2;
}

const arrow = (a, b) => a + b;

export function exported() {
  return new Animal();
}
""",
        symbols=[
            ("Animal", "class", 8, 14),
            ("Animal.speak", "method", 10, 13),
            ("helper", "function", 17, 19),
            ("arrow", "function", 21, 21),
            ("exported", "function", 23, 25),
        ],
        references={
            ("use", "loud", 12, "Animal.speak", "", ()),  # a name passed as a value
            ("use", "name", 11, "Animal.speak", "this", ()),
            ("import", "fs", 1, None, "", ("readFile", "writeFile")),
            ("import", "path", 2, None, "", ("path",)),
            ("call", "require", 3, None, "", ()),
            ("import", "./util", 3, None, "", ()),
            ("inherit", "Base", 8, "Animal", "", ()),
            ("call", "log", 11, "Animal.speak", "console", ()),
            ("call", "helper", 12, "Animal.speak", "", ()),
            ("call", "Animal", 24, "exported", "", ()),
        },
        signatures={
            "Animal": "class Animal extends Base",
            "arrow": "const arrow = (a, b) =>",
            "exported": "export function exported()",
        },
        docstrings={
            "Animal": "A base class.",
            "Animal.speak": "Speak.",
            "helper": "Helper function.",
        },
    ),
    "kotlin": Case(
        path="src/main/kotlin/Repo.kt",
        source=r"""package com.example

import kotlin.math.max
import java.io.File as JFile

/**
 * A repository.
 */
class Repo(val name: String) : Base(), Closeable {
    // Load items.
    fun load(id: Int): Item {
        println(name)
        return store.find(id)
    }

    companion object {
        const val LIMIT = 10
    }
}

interface Store { fun find(id: Int): Item }

object Registry {
    fun register() = Unit
}

data class Item(val id: Int)

fun String.shout(): String = uppercase()

fun main() {
    val r = Repo("x")
}
""",
        symbols=[
            ("Repo", "class", 9, 19),
            ("Repo.load", "method", 11, 14),
            ("Repo.LIMIT", "constant", 17, 17),
            ("Store", "interface", 21, 21),
            ("Store.find", "method", 21, 21),
            ("Registry", "class", 23, 25),
            ("Registry.register", "method", 24, 24),
            ("Item", "class", 27, 27),
            ("String.shout", "function", 29, 29),
            ("main", "function", 31, 33),
        ],
        references={
            ("import", "kotlin.math.max", 3, None, "", ()),
            ("import", "java.io.File", 4, None, "", ()),
            ("inherit", "Base", 9, "Repo", "", ()),
            ("inherit", "Closeable", 9, "Repo", "", ()),
            ("call", "println", 12, "Repo.load", "", ()),
            ("call", "find", 13, "Repo.load", "store", ()),
            ("call", "uppercase", 29, "String.shout", "", ()),
            ("call", "Repo", 32, "main", "", ()),
        },
        signatures={"Repo.load": "fun load(id: Int): Item", "Registry.register": "fun register()"},
        docstrings={"Repo": "A repository.", "Repo.load": "Load items."},
        parents={"String.shout": "String"},
    ),
    "lua": Case(
        path="lua/account.lua",
        source=r"""local json = require("json")
local util = require "util"

--- A class.
local Account = {}
Account.__index = Account

-- Create an account.
function Account.new(balance)
  local self = setmetatable({}, Account)
  return self
end

-- Deposit money.
function Account:deposit(v)
  self.balance = self.balance + v
  util.log("deposit")
end

local function helper(x)
  return x * 2
end

function M.run() end

return Account
""",
        symbols=[
            ("Account.new", "function", 9, 12),
            ("Account.deposit", "method", 15, 18),
            ("helper", "function", 20, 22),
            ("M.run", "function", 24, 24),
        ],
        references={
            ("call", "require", 1, None, "", ()),
            ("import", "json", 1, None, "", ()),
            ("call", "require", 2, None, "", ()),
            ("import", "util", 2, None, "", ()),
            ("call", "setmetatable", 10, "Account.new", "", ()),
            ("call", "log", 17, "Account.deposit", "util", ()),
        },
        signatures={
            "Account.deposit": "function Account:deposit(v)",
            "helper": "local function helper(x)",
        },
        docstrings={"Account.new": "Create an account.", "Account.deposit": "Deposit money."},
        parents={"Account.deposit": "Account"},
    ),
    "php": Case(
        path="src/Models/User.php",
        source=r"""<?php

namespace App\Models;

use App\Contracts\Storable;
use Illuminate\Support\{Str, Arr};

/**
 * A user model.
 */
class User extends Model implements Storable
{
    use HasName;

    const TABLE = 'users';

    // Save the user.
    public function save(array $opts = []): bool
    {
        $this->validate();
        return Str::lower(helper($opts));
    }
}

interface Storable {}

trait HasName { public function name() { return $this->name; } }

function helper($x) {
    return strlen($x);
}
""",
        symbols=[
            ("User", "class", 11, 23),
            ("User.TABLE", "constant", 15, 15),
            ("User.save", "method", 18, 22),
            ("Storable", "interface", 25, 25),
            ("HasName", "trait", 27, 27),
            ("HasName.name", "method", 27, 27),
            ("helper", "function", 29, 31),
        ],
        references={
            ("import", "App\\Contracts\\Storable", 5, None, "", ()),
            ("import", "Illuminate\\Support", 6, None, "", ("Str", "Arr")),
            ("inherit", "Model", 11, "User", "", ()),
            ("inherit", "Storable", 11, "User", "", ()),
            ("inherit", "HasName", 13, "User", "", ()),
            ("call", "validate", 20, "User.save", "$this", ()),
            ("call", "lower", 21, "User.save", "Str", ()),
            ("call", "helper", 21, "User.save", "", ()),
            ("call", "strlen", 30, "helper", "", ()),
        },
        signatures={"User.save": "public function save(array $opts = []): bool"},
        docstrings={"User": "A user model.", "User.save": "Save the user.", "helper": ""},
    ),
    "python": Case(
        path="shop/session.py",
        source=r'''"""Module doc."""
import os.path
from collections import OrderedDict, defaultdict as dd
from . import sibling

MAX_SIZE = 10


# Helper comment.
def helper(x: int) -> int:
    """Return x doubled."""
    return os.path.join(x) * 2


class Base:
    pass


@dataclass
class Session(Base, abc.ABC):
    """A session."""

    class Inner:
        def deep(self):
            pass

    def request(self, url):
        # not a docstring
        return self.session.get(url)

    @staticmethod
    @cache.memo(limit())
    def build():
        pass
''',
        symbols=[
            ("MAX_SIZE", "constant", 6, 6),
            ("helper", "function", 10, 12),
            ("Base", "class", 15, 16),
            ("Session", "class", 20, 34),
            ("Session.Inner", "class", 23, 25),
            ("Session.Inner.deep", "method", 24, 25),
            ("Session.request", "method", 27, 29),
            ("Session.build", "method", 33, 34),
        ],
        references={
            ("use", "url", 29, "Session.request", "", ()),  # a name passed as a value
            ("use", "x", 12, "helper", "", ()),
            ("import", "os.path", 2, None, "", ()),
            ("import", "collections", 3, None, "", ("OrderedDict", "defaultdict")),
            ("alias", "defaultdict", 3, None, "dd", ()),  # bound as `dd`
            ("import", ".", 4, None, "", ("sibling",)),
            ("call", "join", 12, "helper", "os.path", ()),
            ("inherit", "Base", 20, "Session", "", ()),
            ("inherit", "ABC", 20, "Session", "", ()),
            ("call", "get", 29, "Session.request", "self.session", ()),
            # A decorator is applied by what it decorates: a call, bare or not, of that definition.
            ("call", "dataclass", 19, "Session", "", ()),
            ("call", "staticmethod", 31, "Session.build", "", ()),
            ("call", "memo", 32, "Session.build", "cache", ()),
            ("call", "limit", 32, "Session.build", "", ()),
        },
        signatures={
            "helper": "def helper(x: int) -> int:",
            "Session": "class Session(Base, abc.ABC):",
            "Session.request": "def request(self, url):",
        },
        docstrings={
            "helper": "Return x doubled.",
            "Session": "A session.",
            "Session.request": "",
            "Base": "",
        },
        parents={"Session.Inner.deep": "Session.Inner", "Session": None},
    ),
    "ruby": Case(
        path="lib/shop/cart.rb",
        source=r"""require "json"
require_relative "lib/helper"

module Shop
  # A shopping cart.
  # Holds items.
  class Cart < Base
    include Enumerable

    LIMIT = 10

    # Add an item.
    def add(item)
      @items.push(item)
      log("added")
    end

    def self.build
      new
    end
  end
end

def helper(x)
  x * 2
end
""",
        symbols=[
            ("Shop", "module", 4, 22),
            ("Shop.Cart", "class", 7, 21),
            ("Shop.Cart.LIMIT", "constant", 10, 10),
            ("Shop.Cart.add", "method", 13, 16),
            ("Shop.Cart.build", "method", 18, 20),
            ("helper", "function", 24, 26),
        ],
        references={
            ("call", "require", 1, None, "", ()),
            ("import", "json", 1, None, "", ()),
            ("call", "require_relative", 2, None, "", ()),
            ("import", "lib/helper", 2, None, "", ()),
            ("inherit", "Base", 7, "Shop.Cart", "", ()),
            ("call", "include", 8, "Shop.Cart", "", ()),
            ("inherit", "Enumerable", 8, "Shop.Cart", "", ()),
            ("call", "push", 14, "Shop.Cart.add", "@items", ()),
            ("call", "log", 15, "Shop.Cart.add", "", ()),
        },
        signatures={"Shop.Cart": "class Cart < Base", "Shop.Cart.add": "def add(item)"},
        docstrings={"Shop.Cart": "A shopping cart.\nHolds items.", "Shop.Cart.add": "Add an item."},
    ),
    "rust": Case(
        path="src/shape.rs",
        source=r"""use std::collections::HashMap;
use crate::util::{self, parse as p};

/// A point.
#[derive(Debug)]
pub struct Point {
    x: i32,
}

pub trait Shape {
    fn area(&self) -> f64;
}

impl Shape for Point {
    /// Area of a point.
    fn area(&self) -> f64 {
        helper(self.x)
    }
}

impl Point {
    pub fn new(x: i32) -> Self {
        let m = HashMap::new();
        Point { x }
    }
}

enum Color { Red, Green }

const LIMIT: usize = 5;

macro_rules! square { ($x:expr) => { $x * $x }; }

mod inner {
    pub fn f() { println!("hi"); }
}

fn helper(x: i32) -> f64 {
    x as f64
}
""",
        symbols=[
            ("Point", "struct", 6, 8),
            ("Shape", "trait", 10, 12),
            ("Shape.area", "method", 11, 11),
            ("Point.area", "method", 16, 18),
            ("Point.new", "method", 22, 25),
            ("Color", "enum", 28, 28),
            ("LIMIT", "constant", 30, 30),
            ("square", "macro", 32, 32),
            ("inner", "module", 34, 36),
            ("inner.f", "function", 35, 35),
            ("helper", "function", 38, 40),
        ],
        references={
            ("import", "std::collections::HashMap", 1, None, "", ("HashMap",)),  # the item it brings
            ("import", "crate::util", 2, None, "", ("self", "parse")),
            ("alias", "parse", 2, None, "p", ()),
            ("inherit", "Shape", 14, "Point", "", ()),
            ("call", "helper", 17, "Point.area", "", ()),
            ("call", "new", 23, "Point.new", "HashMap", ()),
            ("call", "println", 35, "inner.f", "", ()),
        },
        signatures={
            "Point": "pub struct Point",
            "Point.new": "pub fn new(x: i32) -> Self",
            "Shape.area": "fn area(&self) -> f64;",
        },
        docstrings={"Point": "A point.", "Point.area": "Area of a point.", "Point.new": ""},
        parents={"Point.area": "Point", "inner.f": "inner"},
    ),
    "scala": Case(
        path="src/main/scala/Shape.scala",
        source=r"""package com.example

import scala.collection.mutable
import java.io.{File, InputStream => IS}

/** A shape. */
trait Shape {
  def area: Double
}

// A circle.
class Circle(r: Double) extends Base with Shape {
  def area: Double = math.Pi * r * r

  def scale(k: Double): Circle = {
    println(k)
    new Circle(r * k)
  }
}

object Main {
  val Limit = 10
  def main(args: Array[String]): Unit = {
    val c = Circle(1.0)
    c.scale(2)
  }
}

case class Point(x: Int, y: Int)
""",
        symbols=[
            ("Shape", "trait", 7, 9),
            ("Shape.area", "method", 8, 8),
            ("Circle", "class", 12, 19),
            ("Circle.area", "method", 13, 13),
            ("Circle.scale", "method", 15, 18),
            ("Main", "class", 21, 27),
            ("Main.Limit", "constant", 22, 22),
            ("Main.main", "method", 23, 26),
            ("Point", "class", 29, 29),
        ],
        references={
            ("import", "scala.collection.mutable", 3, None, "", ()),
            ("import", "java.io", 4, None, "", ("File", "InputStream")),
            ("inherit", "Base", 12, "Circle", "", ()),
            ("inherit", "Shape", 12, "Circle", "", ()),
            ("call", "println", 16, "Circle.scale", "", ()),
            ("call", "Circle", 17, "Circle.scale", "", ()),
            ("call", "Circle", 24, "Main.main", "", ()),
            ("call", "scale", 25, "Main.main", "c", ()),
        },
        signatures={
            "Circle": "class Circle(r: Double) extends Base with Shape",
            "Circle.scale": "def scale(k: Double): Circle",
        },
        docstrings={"Shape": "A shape.", "Circle": "A circle."},
    ),
    "swift": Case(
        path="Sources/Car.swift",
        source=r"""import Foundation
import UIKit

/// A vehicle.
protocol Vehicle {
    func drive() -> Int
}

// A car.
class Car: Base, Vehicle {
    var speed: Int = 0

    /// Drive it.
    func drive() -> Int {
        print("vroom")
        return engine.start(speed)
    }

    init(speed: Int) { self.speed = speed }
}

struct Point { let x: Int }

enum Dir { case up, down }

extension Car {
    func honk() { beep() }
}

func helper(_ x: Int) -> Int { return x }
""",
        symbols=[
            ("Vehicle", "interface", 5, 7),
            ("Vehicle.drive", "method", 6, 6),
            ("Car", "class", 10, 20),
            ("Car.drive", "method", 14, 17),
            ("Car.init", "method", 19, 19),
            ("Point", "struct", 22, 22),
            ("Dir", "enum", 24, 24),
            ("Car.honk", "method", 27, 27),
            ("helper", "function", 30, 30),
        ],
        references={
            ("import", "Foundation", 1, None, "", ()),
            ("import", "UIKit", 2, None, "", ()),
            ("inherit", "Base", 10, "Car", "", ()),
            ("inherit", "Vehicle", 10, "Car", "", ()),
            ("call", "print", 15, "Car.drive", "", ()),
            ("call", "start", 16, "Car.drive", "engine", ()),
            ("call", "beep", 27, "Car.honk", "", ()),
        },
        signatures={"Car": "class Car: Base, Vehicle", "Car.drive": "func drive() -> Int"},
        docstrings={"Vehicle": "A vehicle.", "Car": "A car.", "Car.drive": "Drive it."},
        parents={"Car.honk": "Car"},
    ),
    "typescript": Case(
        path="src/service.ts",
        source=r"""import { Injectable } from "@angular/core";
import * as fs from "fs";

/** Something that greets. */
export interface Greeter extends Named {
  greet(name: string): string;
}

type Id = string | number;

enum Mode { A, B }

@Injectable()
export class Service extends BaseService implements Greeter {
  // Greet someone.
  greet(name: string): string {
    return fs.readFileSync(name).toString();
  }
}

export function helper(x: number): number {
  return Math.max(x, 1);
}

const arrow = (a: number): number => a + 1;
""",
        symbols=[
            ("Greeter", "interface", 5, 7),
            ("Greeter.greet", "method", 6, 6),
            ("Id", "type", 9, 9),
            ("Mode", "enum", 11, 11),
            ("Service", "class", 14, 19),
            ("Service.greet", "method", 16, 18),
            ("helper", "function", 21, 23),
            ("arrow", "function", 25, 25),
        ],
        references={
            ("use", "name", 17, "Service.greet", "", ()),  # a name passed as a value
            ("use", "x", 22, "helper", "", ()),
            ("import", "@angular/core", 1, None, "", ("Injectable",)),
            ("import", "fs", 2, None, "", ("*",)),
            ("inherit", "Named", 5, "Greeter", "", ()),
            ("call", "Injectable", 13, "Service", "", ()),  # applied by the class it decorates
            ("inherit", "BaseService", 14, "Service", "", ()),
            ("inherit", "Greeter", 14, "Service", "", ()),
            ("call", "readFileSync", 17, "Service.greet", "fs", ()),
            ("call", "toString", 17, "Service.greet", "fs.readFileSync(name)", ()),
            ("call", "max", 22, "helper", "Math", ()),
        },
        signatures={
            "Greeter": "export interface Greeter extends Named",
            "Service.greet": "greet(name: string): string",
            "helper": "export function helper(x: number): number",
        },
        docstrings={"Greeter": "Something that greets.", "Service.greet": "Greet someone."},
    ),
    "tsx": Case(
        path="src/Button.tsx",
        source=r"""import React from "react";
import { useState } from "react";

interface Props {
  title: string;
}

// A button.
export function Button(props: Props) {
  const [n, setN] = useState(0);
  return <button onClick={() => setN(n + 1)}>{props.title}</button>;
}

class Panel extends React.Component<Props> {
  render() {
    return <div>{this.props.title}</div>;
  }
}
""",
        symbols=[
            ("Props", "interface", 4, 6),
            ("Button", "function", 9, 12),
            ("Panel", "class", 14, 18),
            ("Panel.render", "method", 15, 17),
        ],
        references={
            ("import", "react", 1, None, "", ("React",)),
            ("import", "react", 2, None, "", ("useState",)),
            ("call", "useState", 10, "Button", "", ()),
            ("call", "setN", 11, "Button", "", ()),
            ("inherit", "Component", 14, "Panel", "", ()),
        },
        signatures={"Button": "export function Button(props: Props)", "Panel.render": "render()"},
        docstrings={"Button": "A button.", "Panel": ""},
    ),
    "zig": Case(
        path="src/point.zig",
        source=r"""const std = @import("std");
const util = @import("util.zig");

/// A 2D point.
pub const Point = struct {
    x: i32,
    y: i32,

    /// Add two points.
    pub fn add(self: Point, other: Point) Point {
        return .{ .x = self.x + other.x, .y = helper(self.y) };
    }
};

const Color = enum { red, green };

const MAX: usize = 10;

// Helper.
fn helper(v: i32) i32 {
    std.debug.print("{}\n", .{v});
    return v;
}

test "add" {
    _ = helper(1);
}
""",
        symbols=[
            ("Point", "struct", 5, 13),
            ("Point.add", "method", 10, 12),
            ("Color", "enum", 15, 15),
            ("MAX", "constant", 17, 17),
            ("helper", "function", 20, 23),
        ],
        references={
            ("import", "std", 1, None, "", ()),
            ("import", "util.zig", 2, None, "", ()),
            ("call", "helper", 11, "Point.add", "", ()),
            ("call", "print", 21, "helper", "std.debug", ()),
            ("call", "helper", 26, None, "", ()),
        },
        signatures={
            "Point.add": "fn add(self: Point, other: Point) Point",
            "helper": "fn helper(v: i32) i32",
        },
        docstrings={"Point": "A 2D point.", "Point.add": "Add two points.", "helper": "Helper."},
    ),
}

_PARSED: dict[str, ParsedFile] = {}


def parsed(language: str) -> ParsedFile:
    if language not in _PARSED:
        case = CASES[language]
        _PARSED[language] = parse_file(case.path, case.source.encode())
    return _PARSED[language]


LANGUAGES = sorted(CASES)


def test_every_language_has_a_case() -> None:
    from maguyva.index.parse.languages import LANGUAGES as SPECS

    assert sorted(SPECS) == LANGUAGES


@pytest.mark.parametrize("language", LANGUAGES)
def test_language_is_detected(language: str) -> None:
    assert parsed(language).language == language


@pytest.mark.parametrize("language", LANGUAGES)
def test_symbols(language: str) -> None:
    case = CASES[language]
    symbols = parsed(language).symbols
    got = [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in symbols]
    assert got == case.symbols
    for symbol in symbols:
        assert symbol.kind in SYMBOL_KINDS
        assert symbol.name == symbol.qualified_name.rsplit(".", 1)[-1]
        assert symbol.signature, symbol
        lines = case.source.split("\n")[symbol.start_line - 1 : symbol.end_line]
        assert symbol.name.split("::")[-1] in "\n".join(lines), symbol


@pytest.mark.parametrize("language", LANGUAGES)
def test_signatures_docstrings_and_parents(language: str) -> None:
    case = CASES[language]
    by_name = {s.qualified_name: s for s in parsed(language).symbols}
    for name, signature in case.signatures.items():
        assert by_name[name].signature == signature, name
    for name, docstring in case.docstrings.items():
        assert by_name[name].docstring == docstring, name
    for name, parent in case.parents.items():
        assert by_name[name].parent == parent, name
    for symbol in by_name.values():
        if "." in symbol.qualified_name and symbol.name == symbol.qualified_name.split(".")[-1]:
            assert symbol.parent == symbol.qualified_name.rsplit(".", 1)[0], symbol


@pytest.mark.parametrize("language", LANGUAGES)
def test_references(language: str) -> None:
    got = {
        (r.kind, r.name, r.line, r.enclosing, r.qualifier, r.imported_names)
        for r in parsed(language).references
    }
    assert got == CASES[language].references
    kinds = {r.kind for r in parsed(language).references}
    assert {"call", "import"} <= kinds


@pytest.mark.parametrize("language", LANGUAGES)
def test_chunks(language: str) -> None:
    case = CASES[language]
    result = parsed(language)
    lines = case.source.split("\n")
    chunks = result.chunks
    assert chunks
    previous_end = 0
    covered: set[int] = set()
    for chunk in chunks:
        assert previous_end < chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.text.strip() and lines[chunk.start_line - 1].strip()
        assert chunk.end_line - chunk.start_line < MAX_CHUNK_LINES
        assert significant_chars(chunk.text) <= MAX_CHUNK_CHARS
        covered.update(range(chunk.start_line, chunk.end_line + 1))
        previous_end = chunk.end_line
    # Every non-blank line is in a chunk.
    assert {i + 1 for i, line in enumerate(lines) if line.strip()} <= covered
    # A function or method is never cut: it lies within one chunk.
    for symbol in result.symbols:
        if symbol.kind in ("function", "method"):
            assert any(
                c.start_line <= symbol.start_line and symbol.end_line <= c.end_line for c in chunks
            ), symbol
    # Chunks name what they define or sit in.
    names = {s.qualified_name for s in result.symbols}
    prefixes = {n.rsplit(".", i)[0] for n in names for i in range(n.count(".") + 1)}
    for chunk in chunks:
        assert chunk.symbol is None or chunk.symbol in prefixes, chunk
        inside = [
            s
            for s in result.symbols
            if chunk.start_line <= s.start_line and s.end_line <= chunk.end_line
        ]
        if (
            len(
                {
                    s.qualified_name
                    for s in inside
                    if s.parent is None or s.parent not in {t.qualified_name for t in inside}
                }
            )
            == 1
        ):
            outer = min(inside, key=lambda s: (s.start_line, -s.end_line))
            assert chunk.symbol == outer.qualified_name, chunk
