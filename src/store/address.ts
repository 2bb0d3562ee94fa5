/** A postal address as stores, orders and customers keep it (SPEC §2.4 deliveryAddress). */
export interface Address {
  street: string;
  number: string;
  neighborhood: string;
  city: string;
  state: string;
  postalCode: string;
  complement?: string | null;
}
