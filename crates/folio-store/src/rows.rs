//! Reading a query's rows into the store's structs, column by field name,
//! as `#[derive(sqlx::FromRow)]` would without sqlx's macro crates (see
//! `migrations.rs` for why they are left out). The field list is checked by
//! the compiler: a struct literal must name every field exactly once.

/// `from_row!(Struct { field, … })` implements `sqlx::FromRow` for SQLite
/// rows whose columns are named as the fields.
macro_rules! from_row {
    ($row:ident { $($field:ident),+ $(,)? }) => {
        impl<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> for $row {
            fn from_row(row: &'r sqlx::sqlite::SqliteRow) -> sqlx::Result<Self> {
                use sqlx::Row;
                Ok($row { $($field: row.try_get(stringify!($field))?),+ })
            }
        }
    };
}

pub(super) use from_row;
