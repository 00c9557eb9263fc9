//! `#[derive(Wire)]` and `#[derive(Columns)]`: what the `record` crate's
//! traits need, read from a record's declaration, so that a field added to
//! it is in its bytes and its table columns without another word.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{parse_macro_input, Data, DeriveInput, Error, Field, Fields, Ident};

/// Every field in declaration order; an enum's variant by its place among
/// the variants, then that variant's fields.
#[proc_macro_derive(Wire)]
pub fn derive_wire(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let name = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let (put, take) = match &input.data {
        Data::Struct(data) => {
            let (pattern, puts, construction) = fields_on_the_wire(quote!(#name), &data.fields);
            (
                quote!(let #pattern = self; #(#puts)*),
                quote!(Ok(#construction)),
            )
        }
        Data::Enum(data) => {
            let unknown = format!("unknown {name}");
            let (put_arms, take_arms): (Vec<_>, Vec<_>) = data
                .variants
                .iter()
                .enumerate()
                .map(|(place, variant)| {
                    let tag = u8::try_from(place).expect("at most 256 variants");
                    let variant_name = &variant.ident;
                    let (pattern, puts, construction) =
                        fields_on_the_wire(quote!(#name::#variant_name), &variant.fields);
                    (
                        quote!(#pattern => { ::record::Wire::put(&#tag, out); #(#puts)* }),
                        quote!(#tag => Ok(#construction)),
                    )
                })
                .unzip();
            (
                quote!(match self { #(#put_arms)* }),
                quote!(match <u8 as ::record::Wire>::take(input)? {
                    #(#take_arms,)*
                    _ => Err(::record::Malformed(#unknown)),
                }),
            )
        }
        Data::Union(_) => {
            return Error::new_spanned(name, "a union has no fields to put on the wire")
                .to_compile_error()
                .into()
        }
    };
    quote! {
        impl #impl_generics ::record::Wire for #name #type_generics #where_clause {
            fn put(&self, out: &mut ::std::vec::Vec<u8>) {
                #put
            }
            fn take(input: &mut &[u8]) -> ::std::result::Result<Self, ::record::Malformed> {
                #take
            }
        }
    }
    .into()
}

/// The pattern that binds each of `fields` of `path`, a statement putting
/// each, and the expression that takes them back in the same order.
fn fields_on_the_wire(path: Tokens, fields: &Fields) -> (Tokens, Vec<Tokens>, Tokens) {
    let bindings: Vec<Ident> = (0..fields.len())
        .map(|index| format_ident!("field_{index}"))
        .collect();
    let puts = bindings
        .iter()
        .map(|binding| quote!(::record::Wire::put(#binding, out);))
        .collect();
    let take = quote!(::record::Wire::take(input)?);
    match fields {
        Fields::Named(named) => {
            let names: Vec<_> = named.named.iter().map(|field| &field.ident).collect();
            (
                quote!(#path { #(#names: #bindings),* }),
                puts,
                quote!(#path { #(#names: #take),* }),
            )
        }
        Fields::Unnamed(_) => {
            let takes = bindings.iter().map(|_| &take);
            (
                quote!(#path ( #(#bindings),* )),
                puts,
                quote!(#path ( #(#takes),* )),
            )
        }
        Fields::Unit => (quote!(#path), puts, quote!(#path)),
    }
}

/// A struct's fields as columns under their own names, nested where a
/// field is itself a record; a fieldless enum as text, as the JSON writes
/// it. On a field, `#[column(time)]` makes nanoseconds since the epoch a
/// timestamp and `#[column(text)]` a value the JSON writes as text; what
/// serde skips is no column.
#[proc_macro_derive(Columns, attributes(column))]
pub fn derive_columns(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match columns(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn columns(input: &DeriveInput) -> Result<Tokens, Error> {
    let name = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    match &input.data {
        Data::Struct(data) => {
            let columns = data
                .fields
                .iter()
                .filter_map(|field| column(field).transpose())
                .collect::<Result<Vec<_>, _>>()?;
            Ok(quote! {
                impl #impl_generics ::record::Columns for #name #type_generics #where_clause {
                    fn columns() -> ::std::vec::Vec<::record::Column> {
                        ::std::vec![#(#columns),*]
                    }
                }
                impl #impl_generics ::record::Cell for #name #type_generics #where_clause {
                    fn kind() -> ::record::Kind {
                        ::record::Kind::Group(<Self as ::record::Columns>::columns())
                    }
                }
            })
        }
        Data::Enum(data) => {
            if let Some(variant) = data.variants.iter().find(|v| !v.fields.is_empty()) {
                return Err(Error::new_spanned(
                    variant,
                    "only a fieldless enum is a column: its variant's name as text",
                ));
            }
            Ok(quote! {
                impl #impl_generics ::record::Cell for #name #type_generics #where_clause {
                    fn kind() -> ::record::Kind {
                        ::record::Kind::Text
                    }
                }
            })
        }
        Data::Union(_) => Err(Error::new_spanned(name, "a union is no column")),
    }
}

/// How a field reads in a table, as `#[column(...)]` says, or that it is
/// none (serde skips it).
enum Reading {
    AsIs,
    Time,
    Text,
    Skipped,
}

fn column(field: &Field) -> Result<Option<Tokens>, Error> {
    let Some(name) = &field.ident else {
        return Err(Error::new_spanned(field, "a column needs a name"));
    };
    let name = name.to_string();
    let ty = &field.ty;
    let cell = quote!(<#ty as ::record::Cell>);
    let (kind, nullable) = match reading(field)? {
        Reading::Skipped => return Ok(None),
        Reading::AsIs => (quote!(#cell::kind()), quote!(#cell::nullable())),
        Reading::Time => (quote!(#cell::kind().as_time()), quote!(#cell::nullable())),
        // Text whatever the type, which then need not be a cell: null only when optional.
        Reading::Text => {
            let optional = is_option(ty);
            (quote!(::record::Kind::Text), quote!(#optional))
        }
    };
    Ok(Some(quote! {
        ::record::Column { name: #name, kind: #kind, nullable: #nullable }
    }))
}

fn is_option(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "Option"),
        _ => false,
    }
}

fn reading(field: &Field) -> Result<Reading, Error> {
    let mut reading = Reading::AsIs;
    for attribute in &field.attrs {
        if attribute.path().is_ident("serde") {
            attribute.parse_nested_meta(|meta| {
                if meta.path.is_ident("skip") {
                    reading = Reading::Skipped;
                }
                pass_over(meta)
            })?;
        } else if attribute.path().is_ident("column") {
            attribute.parse_nested_meta(|meta| {
                reading = if meta.path.is_ident("time") {
                    Reading::Time
                } else if meta.path.is_ident("text") {
                    Reading::Text
                } else {
                    return Err(meta.error("expected time or text"));
                };
                Ok(())
            })?;
        }
    }
    Ok(reading)
}

/// Reads past the rest of one of serde's settings, `= value` or `(...)`,
/// which say nothing of the columns.
fn pass_over(meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(pass_over)?;
    }
    Ok(())
}
