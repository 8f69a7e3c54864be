// jStat ships no types; these are the distribution functions svc uses.
declare module "jstat" {
  type Distribution = { cdf(x: number, ...params: number[]): number; inv(p: number, ...params: number[]): number; pdf(x: number, ...params: number[]): number };
  const jStat: { chisquare: Distribution; studentt: Distribution; normal: Distribution; beta: Distribution };
  export default jStat;
}
