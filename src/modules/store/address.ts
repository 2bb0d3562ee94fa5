/** A postal address as stores, orders (deliveryAddress) and customers keep it. */
export interface Address {
  street: string;
  number: string;
  neighborhood: string;
  city: string;
  state: string;
  postalCode: string;
  complement?: string | null;
}
