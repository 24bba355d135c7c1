mod attributes;
mod enums;
mod shapes;
mod support;
mod typed;
