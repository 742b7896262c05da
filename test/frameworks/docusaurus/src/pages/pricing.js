import Page from '../components/Page';

export default function Pricing() {
  return <Page title="Pricing"><p>Pricing page</p></Page>;
}
